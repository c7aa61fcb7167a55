# frozen_string_literal: true

require "open3"
require_relative "platforms"

# Compiling the extension's library for each Ruby of a platform gem and staging
# it, natively or cross-compiled for another architecture's Debian root.
module LeaseMachinesPackaging
  module_function

  def rubies
    list = ENV["RUBIES"].to_s.split(/[\s,]+/).reject(&:empty?)
    list.empty? ? [Gem.ruby] : list
  end

  def ruby_info(ruby)
    out, status = Open3.capture2(ruby, "-e", 'print RUBY_VERSION[/\A\d+\.\d+/], " ", RbConfig::CONFIG["DLEXT"]')
    raise "#{ruby} did not run" unless status.success?

    out.split
  end

  # Compiles the extension with `ruby` for `platform` and stages it as
  # libs/<minor>/lease_machines_native.<dlext>. With CROSS_ROOT, for the Ruby
  # of that root instead (see cross_env).
  def build_library(platform, triple, ruby)
    minor, ruby_dlext = ruby_info(ruby)
    env = { "CARGO_BUILD_TARGET" => cargo_target(triple) }
    unless ENV["CROSS_ROOT"].to_s.empty?
      minor, cross = cross_env(File.expand_path(ENV.fetch("CROSS_ROOT")), triple)
      env.merge!(cross)
    end
    compile_and_stage(platform, minor, env, ruby, ruby_dlext)
  end

  # Runs extconf.rb and make with `env` (the cargo target, and for a cross
  # build the target Ruby's RBCONFIG_*) and stages the library as
  # libs/<minor>/lease_machines_native.<platform's dlext>. `ruby` runs
  # extconf.rb, whose DLLIB is named with that Ruby's `ruby_dlext`.
  def compile_and_stage(platform, minor, env, ruby, ruby_dlext)
    build_dir = File.join(platform_dir(platform), "build", minor)
    mkdir_p build_dir
    # The commands are shown without `env` (a cross build's holds all of RbConfig).
    [[ruby, EXTCONF], [ENV.fetch("MAKE", "make")]].each do |command|
      puts "#{command.join(' ')} (in #{build_dir}#{", #{env.size} variables set" if env.size > 1})"
      sh env, *command, chdir: build_dir, verbose: false
    end
    staged = File.join(libs_dir(platform), minor, "#{EXT}.#{dlext_for(platform)}")
    mkdir_p File.dirname(staged)
    cp File.join(build_dir, "#{EXT}.#{ruby_dlext}"), staged
  end

  # RbConfig::CONFIG of another Ruby, from its rbconfig.rb, loaded by this
  # Ruby. rbconfig.rb refuses a Ruby of another minor than its own; given
  # `ruby_version` (that Ruby's), it sees that version instead of this one's.
  # @return [Hash{String => String}]
  def load_rbconfig(rbconfig, ruby_version: nil)
    dump, status = Open3.capture2(Gem.ruby, "--disable-gems", "-e", <<~'RUBY', rbconfig, *ruby_version)
      Object.send(:remove_const, :RbConfig) if defined?(RbConfig)
      # Found before ::RUBY_VERSION by the `module RbConfig` body of rbconfig.rb.
      module RbConfig; RUBY_VERSION = ARGV.fetch(1); end if ARGV[1]
      load ARGV.fetch(0)
      print RbConfig::CONFIG.map { |key, value| "#{key}\x1F#{value}" }.join("\x1E")
    RUBY
    raise "loading #{rbconfig} failed" unless status.success?

    dump.split("\x1E").to_h { |pair| pair.split("\x1F", 2) }
  end

  # The environment under which rb-sys reads `config` instead of this Ruby's
  # RbConfig: RBCONFIG_<key> for every key, and RBCONFIG_CROSS_COMPILING.
  def rbconfig_env(config)
    env = config.to_h { |key, value| ["RBCONFIG_#{key}", value.to_s] }
    env["RBCONFIG_CROSS_COMPILING"] = "yes"
    env
  end

  # Cross-compiling for a Debian root of another architecture (CROSS_ROOT:
  # script/matrix arm64 builds one): rb-sys reads the target Ruby's RbConfig
  # from RBCONFIG_* variables when RBCONFIG_CROSS_COMPILING is yes, taken here
  # from the root's rbconfig.rb (loaded by this Ruby, which must be the same
  # version; it puts its header folders inside the root); Debian's cross gcc
  # (<arch>-linux-gnu-gcc) compiles rb-sys's C shim and links, and bindgen's
  # clang reads the root as its sysroot. @return [Array(String, Hash)] the
  # target Ruby's minor and the environment
  def cross_env(root, triple)
    rbconfig = Dir.glob(File.join(root, "usr/lib/*/ruby/*/rbconfig.rb")).first or
      raise "CROSS_ROOT=#{root}: no usr/lib/*/ruby/*/rbconfig.rb (is the target's ruby installed there?)"
    config = load_rbconfig(rbconfig)
    # rbconfig.rb places its folders under its own location: the root's.
    %w[rubyhdrdir rubyarchhdrdir].each do |key|
      raise "#{rbconfig}: #{key} #{config[key]} is outside #{root}" unless config.fetch(key).start_with?("#{root}/")
    end
    env = rbconfig_env(config)
    gcc = "#{triple.sub('-unknown-', '-')}-gcc"
    env["CARGO_TARGET_#{triple.upcase.tr('-', '_')}_LINKER"] = gcc
    env["CC_#{triple.tr('-', '_')}"] = gcc
    env["BINDGEN_EXTRA_CLANG_ARGS_#{triple.tr('-', '_')}"] = "--sysroot=#{root}"
    ["#{config.fetch('MAJOR')}.#{config.fetch('MINOR')}", env]
  end
end
