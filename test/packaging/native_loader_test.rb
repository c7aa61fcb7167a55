# frozen_string_literal: true

require "minitest/autorun"
require "fileutils"
require "open3"
require "rbconfig"
require "tmpdir"

# lib/lease_machines/native.rb as a platform gem lays it out, in a folder of its
# own: the library of this Ruby's minor is the one loaded, and a fat gem with
# no library for this Ruby fails naming what it holds. The library is the one
# `rake compile` built.
class NativeLoaderTest < Minitest::Test
  ROOT = File.expand_path("../..", __dir__)
  DLEXT = RbConfig::CONFIG.fetch("DLEXT")
  BUILT = File.join(ROOT, "lib", "lease_machines_native", "lease_machines_native.#{DLEXT}")
  MINOR = RUBY_VERSION[/\A\d+\.\d+/]

  def setup
    @dir = Dir.mktmpdir("lease_machines-loader-")
    FileUtils.mkdir_p(File.join(@dir, "lib", "lease_machines"))
    FileUtils.cp(File.join(ROOT, "lib", "lease_machines", "native.rb"), File.join(@dir, "lib", "lease_machines"))
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def place(minor, source = BUILT)
    target = File.join(@dir, "lib", "lease_machines_native", minor, "lease_machines_native.#{DLEXT}")
    FileUtils.mkdir_p(File.dirname(target))
    FileUtils.cp(source, target)
  end

  # Loads the copied native.rb in a fresh Ruby (the way lib/lease_machines.rb
  # does: after the error classes); prints the native library it loaded or the LoadError.
  def load_native
    script = <<~RUBY
      require #{File.join(ROOT, 'lib', 'lease_machines', 'errors').dump} # the extension expects it
      begin
        load #{File.join(@dir, 'lib', 'lease_machines', 'native.rb').dump}
        puts $LOADED_FEATURES.grep(/lease_machines_native\\.#{DLEXT}\\z/)
      rescue LoadError => e
        puts "LoadError: \#{e.message}"
      end
    RUBY
    out, status = Open3.capture2e(RbConfig.ruby, "--disable-gems", "-e", script, chdir: @dir)
    assert_predicate status, :success?, out
    out.strip
  end

  def test_the_library_of_this_rubys_minor_is_loaded_from_a_fat_gem
    place(MINOR)
    place("1.8", __FILE__) # another Ruby's: never touched (it is not even a library)
    assert_equal File.join(File.realpath(@dir), "lib", "lease_machines_native", MINOR, "lease_machines_native.#{DLEXT}"),
                 File.realpath(load_native)
  end

  def test_a_fat_gem_without_this_rubys_library_names_what_it_holds
    place("1.8", __FILE__)
    place("9.9", __FILE__)
    assert_equal "LoadError: lease_machines: this platform gem holds native libraries for Ruby 1.8, 9.9, " \
                 "not for Ruby #{RUBY_VERSION}; install the source gem instead " \
                 "(gem install lease_machines --platform ruby, which builds with cargo)", load_native
  end
end
