# frozen_string_literal: true

require "rubygems/package"
require "tmpdir"
require_relative "macho"
require_relative "library_exports"

module LeaseMachinesPackaging
  # What a darwin platform gem must be, checked on its files since it cannot be
  # loaded here (rake gem:darwin; the release workflow loads it on macOS).
  # Standalone (no Rake): the tests load it.
  module DarwinCheck
    INIT = "_Init_lease_machines_native"
    # The only dylib a library may load: the C library, threads, dyld's API.
    SYSTEM_DYLIBS = ["/usr/lib/libSystem.B.dylib"].freeze
    # Symbols left to be found at load time (-undefined dynamic_lookup) must
    # be Ruby's C API, which the Ruby loading the bundle provides.
    RUBY_API = /\A_(?:rb|ruby)_\w+\z/
    CPUS = { "arm64-darwin" => "arm64", "x86_64-darwin" => "x86_64" }.freeze
    LIBRARY = %r{\Alib/lease_machines_native/(\d+\.\d+)/lease_machines_native\.bundle\z}

    module_function

    # The problems of one library built for `platform` (empty when it passes):
    # a 64-bit Mach-O of the platform's CPU that dlopen loads (a bundle, or
    # the dylib a Rust cdylib is), built for `min_macos` (nil: not checked),
    # exporting Init_lease_machines_native and nothing else but what
    # LibraryExports allows, loading only libSystem and
    # binding every other symbol to libSystem or, looked up at load time, to
    # Ruby's C API. A file that is no Mach-O at all raises MachO::Invalid.
    def library_problems(path, platform, min_macos: nil)
      macho = MachO.new(path)
      problems = []
      cpu = CPUS.fetch(platform)
      problems << "CPU is #{macho.cpu}, not #{cpu}" unless macho.cpu == cpu
      problems << "file type is #{macho.file_type}, not bundle or dylib" unless %w[bundle dylib].include?(macho.file_type)
      problems << "built for macOS #{macho.min_macos.inspect}, not #{min_macos}" if min_macos && macho.min_macos != min_macos
      problems << "does not export #{INIT}" unless macho.exported.include?(INIT)
      problems << LibraryExports.problem(macho.exported, prefix: "_")
      (macho.dylibs - SYSTEM_DYLIBS).each { |dylib| problems << "loads #{dylib}" }
      macho.imports.each do |import|
        next if import.library == :flat_lookup ? import.name.match?(RUBY_API) : SYSTEM_DYLIBS.include?(import.library)

        problems << "#{import.name} is bound to #{import.library}"
      end
      problems.compact
    end

    # Checks a built darwin gem: a library per Ruby minor where the loader
    # looks (lib/lease_machines_native/<minor>/), each passing
    # library_problems, and no Rust source or manifest inside. Raises naming
    # every problem; @return [Array<String>] the Ruby minors it holds
    def check_gem(gem, min_macos: nil)
      package = Gem::Package.new(gem)
      platform = package.spec.platform.to_s
      files = package.contents
      problems = files.grep(%r{\.rs\z|(?:\A|/)Cargo\.(?:toml|lock)\z}).map { |file| "#{file}: a Rust source in the gem" }
      minors = files.grep(LIBRARY) { Regexp.last_match(1) }
      problems << "no lib/lease_machines_native/<minor>/lease_machines_native.bundle" if minors.empty?
      Dir.mktmpdir do |dir|
        package.extract_files(dir)
        files.grep(LIBRARY).each do |file|
          library_problems(File.join(dir, file), platform, min_macos: min_macos).each do |problem|
            problems << "#{file}: #{problem}"
          end
        rescue MachO::Invalid => e
          problems << "#{file}: #{e.message}"
        end
      end
      raise "#{File.basename(gem)}:\n  #{problems.join("\n  ")}" unless problems.empty?

      minors
    end
  end
end
