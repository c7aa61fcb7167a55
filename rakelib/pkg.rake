# frozen_string_literal: true

# Packaging: the source gem, the precompiled platform gems, and smoke tests that
# install each built .gem into a throwaway GEM_HOME and use it from outside the
# repository (the packaged artifact is what gets tested).
#
#   rake gem                          pkg/lease_machines-VERSION.gem (compiles with cargo on install)
#   rake native gem                   also pkg/lease_machines-VERSION-<this platform>.gem
#   rake gem:native:aarch64-linux     a platform gem, built with `cargo rustc --target <triple>`
#   rake gem:smoke                    build both gems for this machine, install, require, check
#   rake "gem:smoke:install[pkg/x.gem]"  smoke-test one built gem (CI, other platforms)
#   rake gem:fat                      the x86_64-linux gem for this Ruby and trixie's 3.3 (needs
#                                     root: script/matrix lib/smoke trixie), smoke-tested in both
#   rake gem:aarch64                  the aarch64-linux gem, cross-compiled, smoke-tested under qemu
#                                     (needs root: script/matrix arm64)
#
# Platform gems carry one library per Ruby minor, in
# lib/lease_machines_native/<major.minor>/, the folder lib/lease_machines/native.rb
# tries first. Environment for gem:native:<platform>:
#   RUBIES  ruby executables to build for, separated by spaces or commas
#           (default: the Ruby running rake). One library per Ruby minor.
#   CARGO   cargo or a drop-in (cargo-zigbuild); read by extconf.rb.
#   GLIBC   with CARGO=cargo-zigbuild, the oldest glibc to link against on
#           *-linux-gnu targets, e.g. 2.17 (becomes --target <triple>.2.17).
#   CROSS_ROOT  a Debian root of the target architecture whose Ruby (of this
#           Ruby's version) to build for, with Debian's cross gcc (see cross_env;
#           `script/matrix arm64` builds tmp/matrix/arm64/root).
# `gem:native:<platform>:lib` only builds and stages (libraries accumulate, so a
# fat gem can be assembled across several containers); `:pack` packs what is
# staged; `gem:native:<platform>` clears the stage, then does both.

require "fileutils"
require "open3"
require "rbconfig"
require "rubygems/package"
require "tmpdir"

# Helpers for the packaging tasks below.
module LeaseMachinesPackaging
  extend Rake::DSL

  ROOT = File.expand_path("..", __dir__)
  EXT = "lease_machines_native"
  EXTCONF = File.join(ROOT, "ext", EXT, "extconf.rb")

  # RubyGems platform => Rust target triple.
  PLATFORMS = {
    "x86_64-linux" => "x86_64-unknown-linux-gnu",
    "aarch64-linux" => "aarch64-unknown-linux-gnu",
    "x86_64-linux-musl" => "x86_64-unknown-linux-musl",
    "arm64-darwin" => "aarch64-apple-darwin",
    "x86_64-darwin" => "x86_64-apple-darwin"
  }.freeze

  # Environment passed to `gem install` and to the smoke Ruby; everything else is dropped.
  BASE_ENV = %w[HOME USER LOGNAME LANG LC_ALL TMPDIR TERM MAKE CC].freeze
  CARGO_ENV = %w[CARGO CARGO_HOME RUSTUP_HOME RUSTUP_TOOLCHAIN RUSTC CARGO_TARGET_DIR
                 CARGO_BUILD_JOBS CARGO_NET_OFFLINE LIBCLANG_PATH].freeze

  # Run by the Ruby that smoke-tests an installed gem, from an empty folder.
  SMOKE_SCRIPT = <<~'RUBY'
    def check(label, actual, expected)
      return if actual == expected

      warn "smoke: #{label}: expected #{expected.inspect}, got #{actual.inspect}"
      exit 1
    end

    require "lease_machines"

    home = File.realpath(ENV.fetch("GEM_HOME"))
    spec = Gem.loaded_specs["lease_machines"]
    check "lease_machines loaded as an installed gem", spec.nil?, false
    check "version", LeaseMachines::VERSION, ENV.fetch("SMOKE_VERSION")
    check "gem version", spec.version.to_s, ENV.fetch("SMOKE_VERSION")
    check "gem platform", spec.platform.to_s, ENV.fetch("SMOKE_PLATFORM")
    check "gem comes from the throwaway GEM_HOME", File.realpath(spec.full_gem_path).start_with?("#{home}/"), true
    ours = $LOADED_FEATURES.grep(/lease_machines/).map { |path| File.realpath(path) }
    check "nothing loaded from the repository",
          ours.reject { |path| path.start_with?("#{home}/") }, []
    natives = ours.grep(/lease_machines_native\.#{RbConfig::CONFIG.fetch("DLEXT")}\z/o)
    check "one native library loaded", natives.size, 1
    if spec.platform.to_s != "ruby"
      minor = RUBY_VERSION[/\A\d+\.\d+/]
      check "precompiled library", natives.first,
            "#{File.realpath(spec.full_gem_path)}/lib/lease_machines_native/#{minor}/lease_machines_native.#{RbConfig::CONFIG.fetch("DLEXT")}"
    end

    authority = LeaseMachines::Authority.new
    granted = authority.acquire(owner: 1, now: 0.0, ttl: 10.0)
    check "acquire", [granted.status, granted.lease.owner, granted.lease.token, granted.lease.expires_at],
          [:granted, 1, 1, 10.0]
    check "acquire while held", authority.acquire(owner: 2, now: 1.0, ttl: 10.0).reason, :occupied
    renewed = authority.renew(owner: 1, token: 1, now: 5.0, ttl: 10.0)
    check "renew", [renewed.status, renewed.lease.token, renewed.lease.expires_at], [:renewed, 1, 15.0]
    check "renew by another owner", authority.renew(owner: 2, token: 1, now: 5.0, ttl: 10.0).reason, :not_owner
    check "release", authority.release(owner: 1, token: 1, now: 6.0).status, :released
    check "release again", authority.release(owner: 1, token: 1, now: 6.0).reason, :stale_token
    successor = authority.acquire(owner: 2, now: 6.0, ttl: 10.0)
    check "next grant", [successor.status, successor.lease.owner, successor.lease.token], [:granted, 2, 2]
    restored = LeaseMachines::Authority.restore(authority.checkpoint)
    check "restored authority", restored.acquire(owner: 3, now: 17.0, ttl: 1.0).lease.token, 3

    fence = LeaseMachines::Fence.new
    check "fence accepts the successor", fence.accept(successor.lease.token), true
    check "fence accepts the same token", fence.accept(successor.lease.token), true
    check "fence refuses the stale holder", fence.accept(granted.lease.token), false
    check "fence highest", fence.highest, 2

    raised = begin
      authority.acquire(owner: 1.5, now: 20.0, ttl: 1.0)
    rescue TypeError
      :type_error
    end
    check "a Float owner raises TypeError", raised, :type_error

    # A durable decision: the SQLite store (the sqlite3 gem is the system's).
    require "lease_machines/stores/sqlite"
    require "tmpdir"
    Dir.mktmpdir("lease_machines-smoke-sqlite") do |dir|
      store = LeaseMachines::Stores::SQLite.new(File.join(dir, "smoke.sqlite3")).setup!
      stored = store.authority("smoke").acquire(owner: 1, ttl: 30)
      check "sqlite store grant", [stored.status, stored.lease.token], [:granted, 1]
      check "sqlite store refuses another owner", store.authority("smoke").acquire(owner: 2, ttl: 30).reason, :occupied
      check "sqlite store checkpoint", store.authority("smoke").checkpoint.last_issued, 1
      store.close
    end

    puts "smoke ok: lease_machines #{spec.version} (#{spec.platform}) on ruby #{RUBY_VERSION}, " \
         "native library #{natives.first}"
  RUBY

  module_function

  def version
    GEMSPEC.version.to_s
  end

  # This machine's RubyGems platform as platform gems are named: Debian's Ruby
  # reports x86_64-linux-gnu and macOS adds the kernel version (arm64-darwin-23);
  # gems say x86_64-linux and arm64-darwin. musl keeps its suffix.
  def host_platform
    local = Gem::Platform.local
    os_version = local.version
    os_version = nil if local.os == "darwin" || (local.os == "linux" && os_version == "gnu")
    Gem::Platform.new([local.cpu, local.os, os_version]).to_s
  end

  def rust_host
    return @rust_host if defined?(@rust_host)

    @rust_host = begin
      IO.popen([ENV.fetch("RUSTC", "rustc"), "-vV"], err: File::NULL, &:read)[/^host: (\S+)/, 1]
    rescue SystemCallError
      nil
    end
  end

  # The --target for cargo, or nil to build for the host. Building for the host
  # without --target shares target/release with `rake compile`.
  def cargo_target(triple)
    glibc = ENV["GLIBC"].to_s
    return "#{triple}.#{glibc}" if !glibc.empty? && triple&.end_with?("-linux-gnu")
    return nil if triple.nil? || triple == rust_host

    triple
  end

  def rubies
    list = ENV["RUBIES"].to_s.split(/[\s,]+/).reject(&:empty?)
    list.empty? ? [Gem.ruby] : list
  end

  def ruby_info(ruby)
    out, status = Open3.capture2(ruby, "-e", 'print RUBY_VERSION[/\A\d+\.\d+/], " ", RbConfig::CONFIG["DLEXT"]')
    raise "#{ruby} did not run" unless status.success?

    out.split
  end

  def dlext_for(platform)
    platform.include?("darwin") ? "bundle" : "so"
  end

  def platform_dir(platform)
    File.join(ROOT, "tmp", "pkg", platform)
  end

  def libs_dir(platform)
    File.join(platform_dir(platform), "libs")
  end

  def gem_path(platform = nil)
    File.join(ROOT, "pkg", platform ? "lease_machines-#{version}-#{platform}.gem" : "lease_machines-#{version}.gem")
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
    build_dir = File.join(platform_dir(platform), "build", minor)
    mkdir_p build_dir
    sh env, ruby, EXTCONF, chdir: build_dir
    sh env, ENV.fetch("MAKE", "make"), chdir: build_dir
    staged = File.join(libs_dir(platform), minor, "#{EXT}.#{dlext_for(platform)}")
    mkdir_p File.dirname(staged)
    cp File.join(build_dir, "#{EXT}.#{ruby_dlext}"), staged
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
    dump, status = Open3.capture2(Gem.ruby, "--disable-gems", "-e", <<~'RUBY', rbconfig)
      Object.send(:remove_const, :RbConfig) if defined?(RbConfig)
      load ARGV.fetch(0)
      print RbConfig::CONFIG.map { |key, value| "#{key}\x1F#{value}" }.join("\x1E")
    RUBY
    raise "loading #{rbconfig} failed" unless status.success?

    config = dump.split("\x1E").to_h { |pair| pair.split("\x1F", 2) }
    # rbconfig.rb places its folders under its own location: the root's.
    %w[rubyhdrdir rubyarchhdrdir].each do |key|
      raise "#{rbconfig}: #{key} #{config[key]} is outside #{root}" unless config.fetch(key).start_with?("#{root}/")
    end
    env = config.to_h { |key, value| ["RBCONFIG_#{key}", value.to_s] }
    env["RBCONFIG_CROSS_COMPILING"] = "yes"
    gcc = "#{triple.sub('-unknown-', '-')}-gcc"
    env["CARGO_TARGET_#{triple.upcase.tr('-', '_')}_LINKER"] = gcc
    env["CC_#{triple.tr('-', '_')}"] = gcc
    env["BINDGEN_EXTRA_CLANG_ARGS_#{triple.tr('-', '_')}"] = "--sysroot=#{root}"
    ["#{config.fetch('MAJOR')}.#{config.fetch('MINOR')}", env]
  end

  # The gem's files that are not Rust sources or build inputs.
  def ruby_files
    GEMSPEC.files.reject do |file|
      file.start_with?("ext/", "core/") || file.match?(/\ACargo\.(toml|lock)\z/)
    end
  end

  def next_minor(minor)
    major, min = minor.split(".").map(&:to_i)
    "#{major}.#{min + 1}"
  end

  # Patch releases excluded for a Ruby minor a fat gem lacks between two it
  # holds: RubyGems requirements are all ANDed, with no "or" and no wildcard
  # for `!=`, so a hole (3.1 and 3.3, no 3.2) is spelled release by release.
  # No Ruby 3.x minor has had more than a dozen patch releases.
  GAP_PATCHES = (0..19)

  # required_ruby_version for exactly the Ruby minors held: from the first to
  # before the one after the last, without the minors in between it lacks.
  def ruby_requirement(minors)
    requirement = [">= #{minors.first}", "< #{next_minor(minors.last)}.dev"]
    minor = minors.first
    while Gem::Version.new(minor) < Gem::Version.new(minors.last)
      GAP_PATCHES.each { |patch| requirement << "!= #{minor}.#{patch}" } unless minors.include?(minor)
      minor = next_minor(minor)
    end
    requirement
  end

  # Packs pkg/lease_machines-VERSION-<platform>.gem from the staged libraries.
  def pack(platform)
    libs = Dir.glob("*/#{EXT}.#{dlext_for(platform)}", base: libs_dir(platform))
    raise "no library staged for #{platform}: run rake gem:native:#{platform}:lib first" if libs.empty?

    minors = libs.map { |lib| File.dirname(lib) }.sort_by { |minor| Gem::Version.new(minor) }
    lib_files = minors.map { |minor| "lib/#{EXT}/#{minor}/#{EXT}.#{dlext_for(platform)}" }

    spec = GEMSPEC.dup
    spec.platform = Gem::Platform.new(platform)
    spec.extensions = []
    spec.files = ruby_files + lib_files
    spec.required_ruby_version = ruby_requirement(minors)
    # The Rust manifest is not in a platform gem; nothing should try to build it.
    spec.metadata = spec.metadata.reject { |key, _| key.start_with?("cargo_") }

    gem_dir = File.join(platform_dir(platform), "gem")
    FileUtils.rm_rf(gem_dir)
    sources = ruby_files.to_h { |file| [file, File.join(ROOT, file)] }
    minors.zip(lib_files) { |minor, file| sources[file] = File.join(libs_dir(platform), minor, File.basename(file)) }
    sources.each do |file, source|
      FileUtils.mkdir_p(File.join(gem_dir, File.dirname(file)))
      FileUtils.cp(source, File.join(gem_dir, file))
    end

    built = Dir.chdir(gem_dir) { Gem::Package.build(spec) }
    FileUtils.mkdir_p(File.dirname(gem_path(platform)))
    FileUtils.mv(File.join(gem_dir, built), gem_path(platform))
    puts "#{gem_path(platform)}: ruby #{minors.join(', ')}"
  end

  # Like `gem build lease_machines.gemspec`, into pkg/.
  def build_source_gem
    built = Dir.chdir(ROOT) { Gem::Package.build(GEMSPEC) }
    FileUtils.mkdir_p(File.dirname(gem_path))
    FileUtils.mv(File.join(ROOT, built), gem_path)
    puts "#{gem_path}: source, #{GEMSPEC.files.size} files"
  end

  def path_without_cargo
    ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).reject do |dir|
      %w[cargo rustc rustup].any? { |exe| File.executable?(File.join(dir, exe)) }
    end.join(File::PATH_SEPARATOR)
  end

  def smoke_env(home, cargo:)
    keep = cargo ? BASE_ENV + CARGO_ENV : BASE_ENV
    env = ENV.to_h.slice(*keep)
    env.merge(
      "PATH" => cargo ? ENV.fetch("PATH", "") : path_without_cargo,
      "GEM_HOME" => home,
      # The system's gems stay visible (the SQLite decision needs its sqlite3
      # gem, which trixie installs as a gem, not in vendor_ruby); the smoke
      # script checks lease_machines itself came from `home`.
      "GEM_PATH" => [home, *Gem.default_path].join(File::PATH_SEPARATOR),
      "SMOKE_VERSION" => version
    )
  end

  def gem_command
    gem = File.join(RbConfig::CONFIG.fetch("bindir"), "gem")
    File.exist?(gem) ? [Gem.ruby, gem] : ["gem"]
  end

  def run_clean(env, *cmd, chdir:)
    Open3.capture2e(env, *cmd, chdir: chdir, unsetenv_others: true)
  end

  def timed(label)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    yield
  ensure
    puts format("%<label>s: %<secs>.1fs", label: label, secs: Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
  end

  # Installs `gem` into a throwaway GEM_HOME and runs SMOKE_SCRIPT from an empty
  # folder, with no -I and no access to the repository. A platform gem is
  # installed and used with cargo removed from PATH.
  def smoke(gem)
    gem = File.expand_path(gem)
    platform = Gem::Package.new(gem).spec.platform.to_s
    cargo = platform == "ruby"
    Dir.mktmpdir("lease_machines-smoke-") do |dir|
      dir = File.realpath(dir)
      home = File.join(dir, "gem_home")
      work = File.join(dir, "work")
      mkdir_p work
      env = smoke_env(home, cargo: cargo)
      if !cargo && run_clean(env, "sh", "-c", "command -v cargo", chdir: work).last.success?
        raise "smoke: cargo is still on the PATH built for the platform gem"
      end

      timed("install #{File.basename(gem)}#{' (cargo not on PATH)' unless cargo}") do
        out, status = run_clean(env, *gem_command, "install", "--local", "--no-document",
                                "--install-dir", home, gem, chdir: work)
        raise "smoke: gem install #{gem} failed:\n#{out}" unless status.success?
      end
      timed("require and exercise") do
        out, status = run_clean(env.merge("SMOKE_PLATFORM" => platform), Gem.ruby, "-e", SMOKE_SCRIPT, chdir: work)
        puts out
        raise "smoke: #{File.basename(gem)} failed" unless status.success?
      end
    end
  end

  # A fat gem's required_ruby_version admits every patch release of each minor
  # it holds a library for, and no other Ruby.
  def check_ruby_requirement(gem)
    spec = Gem::Package.new(gem).spec
    held = Gem::Package.new(gem).contents.grep(%r{\Alib/#{EXT}/(\d+\.\d+)/}) { Regexp.last_match(1) }.uniq
    requirement = spec.required_ruby_version
    minors = %w[2.7] + (0..9).map { |minor| "3.#{minor}" } + %w[4.0 4.1]
    minors.product([0, 5, 19]).each do |minor, patch|
      version = Gem::Version.new("#{minor}.#{patch}")
      next if requirement.satisfied_by?(version) == held.include?(minor)

      raise "#{File.basename(gem)}: required_ruby_version #{requirement} " \
            "#{held.include?(minor) ? 'refuses' : 'admits'} Ruby #{version}; it holds #{held.join(', ')}"
    end
    puts "#{File.basename(gem)}: holds ruby #{held.join(', ')}; required_ruby_version admits exactly those"
  end

  # Installing the source gem without cargo must fail, and say how to get Rust.
  def smoke_without_cargo(gem)
    gem = File.expand_path(gem)
    Dir.mktmpdir("lease_machines-smoke-") do |dir|
      home = File.join(dir, "gem_home")
      env = smoke_env(home, cargo: false)
      out, status = run_clean(env, *gem_command, "install", "--local", "--no-document",
                              "--install-dir", home, gem, chdir: dir)
      raise "smoke: installing the source gem without cargo succeeded:\n#{out}" if status.success?
      raise "smoke: the failed install does not say how to get Rust:\n#{out}" unless out.include?("https://rustup.rs")
      if File.exist?(File.join(home, "specifications", "lease_machines-#{version}.gemspec"))
        raise "smoke: a failed install left an installed gem spec behind"
      end

      puts "install without cargo: fails, and the message points to https://rustup.rs"
    end
  end
end

desc "Build the source gem pkg/lease_machines-VERSION.gem (cargo compiles the extension at install)"
task :gem do
  LeaseMachinesPackaging.build_source_gem
end

CLEAN.include("tmp/pkg")
CLOBBER.include("pkg")

platforms = LeaseMachinesPackaging::PLATFORMS.dup
host = LeaseMachinesPackaging.host_platform
platforms[host] ||= nil # an unlisted host builds without --target

platforms.each do |platform, triple|
  namespace "gem:native:#{platform}" do
    desc "Compile and stage the #{platform} library for each Ruby in RUBIES (default: this Ruby)"
    task :lib do
      LeaseMachinesPackaging.rubies.each do |ruby|
        LeaseMachinesPackaging.build_library(platform, triple, ruby)
      end
    end

    desc "Pack the staged #{platform} libraries into pkg/lease_machines-VERSION-#{platform}.gem"
    task :pack do
      LeaseMachinesPackaging.pack(platform)
    end

    task :clear do
      rm_rf LeaseMachinesPackaging.libs_dir(platform)
    end
  end

  desc "Build pkg/lease_machines-VERSION-#{platform}.gem (cargo target #{triple || 'of this host'})"
  task "gem:native:#{platform}" => ["gem:native:#{platform}:clear", "gem:native:#{platform}:lib",
                                    "gem:native:#{platform}:pack"]
end

desc "Build the platform gem for this machine (#{host}) and this Ruby; `rake native gem` builds both gems"
task native: "gem:native:#{host}"

# As root on x86_64-linux the platform gem is the fat one (gem:fat: about 7 s
# with the trixie root cached; the first run builds the root, which the
# matrix then reuses), and the aarch64-linux gem is cross-compiled and
# smoke-tested in the arm64 root under qemu (gem:aarch64: about 40 s cached,
# 12 minutes the first time); elsewhere the platform gem holds this Ruby's
# library only.
fat = host == "x86_64-linux" && Process.uid.zero?

desc "Cross-compile pkg/lease_machines-VERSION-aarch64-linux.gem and smoke-test it in the arm64 root under qemu"
task "gem:aarch64" do
  sh({ "MATRIX_SMOKE_ONLY" => "1" }, File.join(LeaseMachinesPackaging::ROOT, "script", "matrix"), "arm64")
end

desc "Build the source and #{host} gems#{' (fat: gem:fat; and gem:aarch64)' if fat}, install each in a throwaway GEM_HOME " \
     "and use it from outside the repo"
task "gem:smoke" => (fat ? %w[gem gem:fat gem:aarch64] : %i[gem native]) do
  LeaseMachinesPackaging.timed("gem:smoke (install and use both gems)") do
    LeaseMachinesPackaging.smoke(LeaseMachinesPackaging.gem_path)
    LeaseMachinesPackaging.smoke(LeaseMachinesPackaging.gem_path(host)) unless fat # gem:fat smoke-tested it
    LeaseMachinesPackaging.smoke_without_cargo(LeaseMachinesPackaging.gem_path)
  end
end

# The fat x86_64-linux gem: this host's Ruby (bookworm's 3.1) and trixie's 3.3,
# whose library is compiled inside the trixie root with its Ruby's headers
# (script/matrix lib trixie); installed without cargo and smoke-tested here
# and inside the trixie root (script/matrix smoke trixie GEM).
FAT_GEM_ENVS = %w[trixie].freeze

desc "Build pkg/lease_machines-VERSION-x86_64-linux.gem for this Ruby and trixie's (#{FAT_GEM_ENVS.join(', ')}), " \
     "smoke-test it here and there"
task "gem:fat" => %w[gem:native:x86_64-linux:clear gem:native:x86_64-linux:lib] do
  matrix = File.join(LeaseMachinesPackaging::ROOT, "script", "matrix")
  gem = LeaseMachinesPackaging.gem_path("x86_64-linux")
  LeaseMachinesPackaging.timed("gem:fat") do
    FAT_GEM_ENVS.each { |env| sh matrix, "lib", env }
    LeaseMachinesPackaging.pack("x86_64-linux")
    LeaseMachinesPackaging.check_ruby_requirement(gem)
    LeaseMachinesPackaging.smoke(gem)
    FAT_GEM_ENVS.each { |env| sh matrix, "smoke", env, gem }
  end
end

desc "Install one built .gem in a throwaway GEM_HOME and smoke-test it (platform gems without cargo on PATH)"
task "gem:smoke:install", [:gem] do |_task, args|
  raise "usage: rake \"gem:smoke:install[pkg/lease_machines-VERSION-PLATFORM.gem]\"" unless args[:gem]

  LeaseMachinesPackaging.smoke(args[:gem])
end
