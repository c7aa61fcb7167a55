# frozen_string_literal: true

require "fileutils"
require_relative "platforms"
require_relative "libraries"
require_relative "smoke"

# Cross-building the darwin platform gems here, on Linux, with no Mac and no
# macOS SDK (rake gem:darwin; the release workflow builds the published ones
# on macOS runners, and only there do they run):
#
# - zig (PyPI's ziglang) links: it carries libSystem's stubs and the macOS C
#   headers, and cargo-zigbuild (PyPI) drives cargo with it, for the linker,
#   the C compiler and bindgen's headers; bindgen's libclang is PyPI's too
#   (DARWIN_PYPI); the Rust targets come from rustup.
# - A darwin Ruby's configuration without a darwin Ruby: Ruby's own
#   `configure --host=<arch>-apple-darwin`, with `zig cc` as the compiler, run
#   on the Debian source package of that Ruby minor (apt-get source, from a
#   private deb-src list), gives ruby/config.h, and tool/mkconfig.rb (run by
#   this Ruby, as a cross build of Ruby does) gives rbconfig.rb. Nothing of
#   Ruby is compiled. rb-sys reads that rbconfig.rb through RBCONFIG_*, and
#   the headers from the source tree and the configured config.h.
# - LLVM's lld links the library, not zig: zig's Mach-O linker takes
#   rustc's -exported_symbols_list and ignores it, so a zig-linked library
#   exported every global Rust symbol (329 besides the init function and
#   ruby_abi_version, which the list names). lld reads the list as Apple's
#   ld (which links the published gems on macOS runners) does. It is the
#   rust-lld of rustup's toolchain, linking against zig's libSystem stubs
#   (darwin_stubs).
#
# Everything goes to tmp/darwin/ and is reused: each step is skipped when its
# result is there.
module LeaseMachinesPackaging
  DARWIN_DIR = File.join(ROOT, "tmp", "darwin")

  # RubyGems platform => zig's target and the oldest macOS, as the release
  # workflow builds them (MACOSX_DEPLOYMENT_TARGET).
  DARWIN_TARGETS = {
    "arm64-darwin" => { zig: "aarch64-macos", macos: "11.0" },
    "x86_64-darwin" => { zig: "x86_64-macos", macos: "10.13" }
  }.freeze

  # Ruby minor => the Debian source package of that Ruby, a suite that has
  # it, and the version to try first when not the suite's newest. 3.4: the
  # files of experimental's newest ruby3.4 source (3.4.11) are not on the
  # mirror (404), those of 3.4.5 are; an extension built against one 3.4
  # loads in every 3.4 (a minor's ABI does not change between its patch
  # releases). When the version named is gone from the suite's index, or its
  # files from the mirror, the suite's others are tried, newest first.
  DARWIN_RUBY_SOURCES = {
    "3.1" => %w[ruby3.1 bookworm],
    "3.3" => %w[ruby3.3 trixie],
    "3.4" => %w[ruby3.4 experimental 3.4.5-1~exp1]
  }.freeze

  # The PyPI packages (as their dist-info folders name them) and the versions
  # the darwin gems were last built and checked with.
  # libclang is bindgen's for these builds alone: the macOS headers zig
  # carries declare _Float16 functions, which bookworm's libclang 14 cannot
  # parse for x86_64.
  DARWIN_PYPI = { "ziglang" => "0.17.1", "cargo_zigbuild" => "0.24.1", "libclang" => "18.1.1" }.freeze

  module_function

  # The Ruby minors of the darwin gems: DARWIN_RUBIES (e.g. "3.1 3.3"), by default all of DARWIN_RUBY_SOURCES.
  def darwin_minors
    list = ENV["DARWIN_RUBIES"].to_s.split(/[\s,]+/).reject(&:empty?)
    list = DARWIN_RUBY_SOURCES.keys if list.empty?
    unknown = list - DARWIN_RUBY_SOURCES.keys
    raise ArgumentError, "DARWIN_RUBIES: no Debian source known for #{unknown.join(', ')}" unless unknown.empty?

    list
  end

  def zig
    File.join(DARWIN_DIR, "py", "ziglang", "zig")
  end

  # LLVM's lld as rustup ships it with the toolchain (rustc infers the
  # Mach-O flavour from its name and the target).
  def rust_lld
    sysroot = IO.popen([ENV.fetch("RUSTC", "rustc"), "--print", "sysroot"], &:read).strip
    path = File.join(sysroot, "lib", "rustlib", rust_host.to_s, "bin", "rust-lld")
    raise "#{path}: no rust-lld in rustc's toolchain (rustup ships it)" unless File.executable?(path)

    path
  end

  # The libSystem stubs lld links against, in tmp/darwin/stubs/: zig's
  # libSystem.tbd without the arm64e.x1 targets, an Apple-internal
  # architecture that LLVM's stub reader refuses; and libc.tbd and libm.tbd,
  # which rustc also asks for, as the SDK has them: links to libSystem.
  # @return [String] the folder
  def darwin_stubs
    dir = File.join(DARWIN_DIR, "stubs")
    stubs = File.read(File.join(File.dirname(zig), "lib", "libc", "darwin", "libSystem.tbd"))
    mkdir_p dir
    File.write(File.join(dir, "libSystem.tbd"), stubs.gsub(/,\s*arm64e\.x1-\w+/, ""))
    %w[libc.tbd libm.tbd].each { |name| ln_sf "libSystem.tbd", File.join(dir, name), verbose: false }
    dir
  end

  # zig and cargo-zigbuild from PyPI into tmp/darwin/py, the Rust targets from rustup.
  def darwin_tools
    timed("darwin tools (zig, cargo-zigbuild, Rust targets)") { install_darwin_tools }
  end

  def install_darwin_tools
    py = File.join(DARWIN_DIR, "py")
    installed = DARWIN_PYPI.all? { |name, version| File.directory?(File.join(py, "#{name}-#{version}.dist-info")) }
    unless installed
      rm_rf py
      sh "python3", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--root-user-action=ignore",
         "--target", py, *DARWIN_PYPI.map { |name, version| "#{name.tr('_', '-')}==#{version}" }
    end
    sh "rustup", "target", "add", *DARWIN_TARGETS.keys.map { |platform| PLATFORMS.fetch(platform) }
  end

  # The first plain Debian mirror in this machine's apt sources (as
  # script/matrix finds it), or MATRIX_MIRROR.
  def debian_mirror
    mirror = ENV.fetch("MATRIX_MIRROR", "")
    return mirror unless mirror.empty?

    sources = Dir.glob(["/etc/apt/sources.list", "/etc/apt/sources.list.d/*.{list,sources}"])
    lines = sources.flat_map { |file| File.readlines(file) }.grep_v(/\A\s*#/)
    lines.join[%r{https?://\S+/debian/?(?=\s)}] || "http://deb.debian.org/debian"
  end

  # Ruby's source tree of `minor` (the upstream tarball of Debian's source
  # package), unpacked in tmp/darwin/src/<minor>/. @return [String] its folder
  def ruby_source(minor)
    package, suite, version = DARWIN_RUBY_SOURCES.fetch(minor)
    dir = File.join(DARWIN_DIR, "src", minor)
    tree = Dir.glob(File.join(dir, "ruby-*/")).first
    return tree.chomp("/") if tree && File.exist?(File.join(tree, "configure"))

    apt = File.join(DARWIN_DIR, "apt", suite)
    mkdir_p [File.join(apt, "lists", "partial"), dir]
    File.write(File.join(apt, "sources.list"), "deb-src #{debian_mirror} #{suite} main\n")
    options = ["-o", "Dir::Etc::SourceList=#{apt}/sources.list", "-o", "Dir::Etc::SourceParts=/nonexistent",
               "-o", "Dir::State::Lists=#{apt}/lists", "-o", "Dir::Cache=#{apt}/cache",
               "-o", "Acquire::Check-Valid-Until=false", "-q"]
    sh "apt-get", *options, "update", out: File::NULL
    download_source(options, package, version, dir)
    tarball = Dir.glob(File.join(dir, "#{package}_*.orig.tar.*")).first or raise "apt-get source #{package}: no orig tarball"
    sh "tar", "-xf", tarball, "-C", dir
    Dir.glob(File.join(dir, "ruby-*/")).first&.chomp("/") or raise "#{tarball}: no ruby-* folder in it"
  end

  # `apt-get source --download-only` of `package` into `dir`: `version`
  # first, then the index's others, newest first, until one's files download.
  def download_source(options, package, version, dir)
    listed = IO.popen(["apt-cache", *options, "showsrc", package], err: File::NULL, &:read).scan(/^Version: (\S+)$/).flatten
    newest_first = listed.uniq.sort_by { |each| Gem::Version.new(each[/\A[\d.]+/] || "0") }.reverse
    tried = [version, *(newest_first - [version])].compact
    found = tried.find do |each|
      command = ["apt-get", *options, "source", "--download-only", "#{package}=#{each}"]
      next true if system(*command, chdir: dir, out: File::NULL, err: File::NULL)

      rm_f Dir.glob(File.join(dir, "#{package}_*")), verbose: false
      false
    end
    found or raise "apt-get source #{package}: none of #{tried.join(', ')} downloaded from #{debian_mirror}"
  end

  # `zig cc` for one macOS target and its oldest macOS (zig ignores
  # MACOSX_DEPLOYMENT_TARGET), as a compiler for Ruby's configure. Ruby's
  # configure adds -lobjc to every link, and zig has libSystem's stubs but
  # not libobjc's; nothing in config.h depends on it, so it is dropped.
  def zig_cc(platform)
    target = DARWIN_TARGETS.fetch(platform)
    path = File.join(DARWIN_DIR, "bin", "zig-cc-#{platform}")
    mkdir_p File.dirname(path)
    File.write(path, <<~SH)
      #!/bin/sh
      # Generated by rakelib/packaging/darwin.rb.
      for arg in "$@"; do shift; [ "$arg" = -lobjc ] || set -- "$@" "$arg"; done
      exec #{zig} cc -target #{target.fetch(:zig)}.#{target.fetch(:macos)} "$@"
    SH
    File.chmod(0o755, path)
    path
  end

  # Ruby `minor` configured for `platform`, in tmp/darwin/config/<platform>/<minor>/:
  # its rbconfig.rb and .ext/include/<arch>/ruby/config.h. @return [String] the folder
  def darwin_ruby_config(platform, minor)
    dir = File.join(DARWIN_DIR, "config", platform, minor)
    return dir if File.exist?(File.join(dir, "rbconfig.rb"))

    source = timed("Ruby #{minor}'s source (apt-get source)") { ruby_source(minor) }
    rm_rf dir
    mkdir_p dir
    timed("configure Ruby #{minor} for #{platform}") { configure_ruby(platform, source, dir) }
    dir
  end

  # The checks whose answers a Ruby minor configured for the same platform
  # may take from another's autoconf cache: autoconf's generic ones, which ask
  # only zig's compiler and the macOS headers (is there this header, this
  # function; how big is this type) and are the bulk of the run. Not the
  # rest: Ruby's own rb_cv_ checks and autoconf's ac_cv_c_ ones change between
  # minors under the same names (3.1's cross build leaves the stack's
  # direction unknown where 3.3 knows it; their autoconfs differ on
  # `restrict`), and a copied answer would be 3.1's, not 3.3's.
  SHARED_CONFIGURE_CHECKS = /\Aac_cv_(?:header|func|sizeof|alignof|type|member|lib|have_decl)_\w+=/

  # `dir`'s config.cache (dir: config/<platform>/<minor>), seeded with the
  # shared answers of the minors already configured for that platform, its
  # siblings. @return [String] its path
  def configure_cache(dir)
    cache = File.join(dir, "config.cache")
    shared = (Dir.glob(File.join(File.dirname(dir), "*", "config.cache")) - [cache]).flat_map do |other|
      File.readlines(other).grep(SHARED_CONFIGURE_CHECKS)
    end
    File.write(cache, shared.uniq.join)
    cache
  end

  def configure_ruby(platform, source, dir)
    host = PLATFORMS.fetch(platform)
    # --with-baseruby: this Ruby runs the configure-time scripts (a cross build needs one).
    sh({ "MACOSX_DEPLOYMENT_TARGET" => DARWIN_TARGETS.fetch(platform).fetch(:macos) },
       File.join(source, "configure"), "--host=#{host}", "--build=#{rust_host || 'x86_64-pc-linux-gnu'}",
       "CC=#{zig_cc(platform)}", "--with-baseruby=#{Gem.ruby}", "--enable-shared", "--disable-install-doc",
       "--without-gmp", "--cache-file=#{configure_cache(dir)}", chdir: dir, out: File.join(dir, "configure.log"))
    # The rbconfig.rb target alone, without its dependency on a built miniruby.
    sh "make", "-s", ".rbconfig.time", "PREP=", chdir: dir
  end

  # The environment of a cross build for `platform` against Ruby `minor`'s
  # darwin configuration: rb-sys reads its RbConfig, the headers of its
  # source tree and its config.h; cargo-zigbuild gives zig as the C compiler,
  # and lld links (against darwin_stubs), honouring rustc's export list.
  def darwin_env(platform, minor)
    config_dir = darwin_ruby_config(platform, minor)
    source = ruby_source(minor)
    config = load_rbconfig(File.join(config_dir, "rbconfig.rb"), ruby_version: File.basename(source).delete_prefix("ruby-"))
    env = rbconfig_env(config)
    env["RBCONFIG_rubyhdrdir"] = File.join(source, "include")
    env["RBCONFIG_rubyarchhdrdir"] = File.join(config_dir, ".ext", "include", config.fetch("arch"))
    triple = PLATFORMS.fetch(platform)
    env.merge(
      "CARGO" => File.join(DARWIN_DIR, "py", "bin", "cargo-zigbuild"),
      # A target folder of its own: the host build's build scripts (clang-sys's) depend on LIBCLANG_PATH, so in
      # the shared one each darwin build made the next host build compile rb-sys and the extension again.
      "CARGO_TARGET_DIR" => File.join(DARWIN_DIR, "target"),
      "CARGO_BUILD_TARGET" => triple,
      # cargo-zigbuild sets its zig linker only where none is set.
      "CARGO_TARGET_#{triple.upcase.tr('-', '_')}_LINKER" => rust_lld,
      "CARGO_TARGET_#{triple.upcase.tr('-', '_')}_RUSTFLAGS" => "-L native=#{darwin_stubs}",
      "MACOSX_DEPLOYMENT_TARGET" => DARWIN_TARGETS.fetch(platform).fetch(:macos),
      "LIBCLANG_PATH" => File.join(DARWIN_DIR, "py", "clang", "native"),
      "PATH" => [File.dirname(zig), ENV.fetch("PATH")].join(File::PATH_SEPARATOR)
    )
  end

  # Compiles and stages the darwin library of `platform` for Ruby `minor`.
  def build_darwin_library(platform, minor)
    _, ruby_dlext = ruby_info(Gem.ruby)
    env = darwin_env(platform, minor)
    timed("compile for #{platform}, Ruby #{minor}") { compile_and_stage(platform, minor, env, Gem.ruby, ruby_dlext) }
  end
end
