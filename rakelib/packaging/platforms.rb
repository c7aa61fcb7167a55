# frozen_string_literal: true

# The helpers of the packaging tasks (rakelib/pkg.rake), in rakelib/packaging/
# (required, not loaded by rake as tasks). This one: the version, the
# platforms and their Rust targets, and where each platform's build goes.
module LeaseMachinesPackaging
  extend Rake::DSL

  ROOT = File.expand_path("../..", __dir__)
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
end
