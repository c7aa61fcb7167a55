# frozen_string_literal: true

require "open3"
require "rbconfig"
require "rubygems/package"
require "tmpdir"
require_relative "platforms"

# Smoke tests of a built .gem: installed into a throwaway GEM_HOME and used from
# an empty folder (a platform gem without cargo on PATH).
module LeaseMachinesPackaging
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
