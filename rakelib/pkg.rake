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
#   rake gem:fat                      the x86_64-linux gem for this Ruby, trixie's 3.3 and Ruby 3.4
#                                     (needs root: script/matrix lib/smoke trixie and ruby34),
#                                     smoke-tested under each
#   rake gem:aarch64                  the aarch64-linux gem, cross-compiled, smoke-tested under qemu
#                                     (needs root: script/matrix arm64)
#   rake gem:darwin                   the arm64-darwin and x86_64-darwin gems, cross-built here with
#                                     zig and lld for the Rubies of DARWIN_RUBIES (default 3.1 3.3 3.4),
#                                     their libraries checked as Mach-O files (rakelib/packaging/darwin.rb);
#                                     gem:darwin:arm64-darwin, gem:darwin:x86_64-darwin: one of them
#   rake "gem:darwin:check[pkg/x.gem]"  that check alone, on a built darwin gem
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
#           Ruby's version) to build for, with Debian's cross gcc (see cross_env,
#           rakelib/packaging/libraries.rb; `script/matrix arm64` builds
#           tmp/matrix/arm64/root).
# `gem:native:<platform>:lib` only builds and stages (libraries accumulate, so a
# fat gem can be assembled across several containers); `:pack` packs what is
# staged; `gem:native:<platform>` clears the stage, then does both.

# The helpers (LeaseMachinesPackaging), by concern.
require_relative "packaging/platforms"
require_relative "packaging/libraries"
require_relative "packaging/packing"
require_relative "packaging/smoke"
require_relative "packaging/darwin"
require_relative "packaging/darwin_check"

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
# 1.5 minutes the first time); elsewhere the platform gem holds this Ruby's
# library only.
fat = host == "x86_64-linux" && Process.uid.zero?
# GEM_SMOKE_AARCH64=0 leaves gem:aarch64 out: bin/test's matrix step runs
# script/matrix arm64, which builds and smoke-tests the same gem before its tests.
aarch64 = fat && ENV["GEM_SMOKE_AARCH64"] != "0"

desc "Cross-compile pkg/lease_machines-VERSION-aarch64-linux.gem and smoke-test it in the arm64 root under qemu"
task "gem:aarch64" do
  sh({ "MATRIX_SMOKE_ONLY" => "1" }, File.join(LeaseMachinesPackaging::ROOT, "script", "matrix"), "arm64")
end

desc "Build the source and #{host} gems#{' (fat: gem:fat; and gem:aarch64)' if fat}, install each in a throwaway GEM_HOME " \
     "and use it from outside the repo"
task "gem:smoke" => (fat ? ["gem", "gem:fat", *("gem:aarch64" if aarch64)] : %i[gem native]) do
  LeaseMachinesPackaging.timed("gem:smoke (install and use both gems)") do
    LeaseMachinesPackaging.smoke(LeaseMachinesPackaging.gem_path)
    LeaseMachinesPackaging.smoke(LeaseMachinesPackaging.gem_path(host)) unless fat # gem:fat smoke-tested it
    LeaseMachinesPackaging.smoke_without_cargo(LeaseMachinesPackaging.gem_path)
  end
end

# The fat x86_64-linux gem: this host's Ruby (bookworm's 3.1), trixie's 3.3
# and experimental's 3.4 (in the sid root), each library compiled inside its
# root with its Ruby's headers (script/matrix lib trixie, lib ruby34);
# installed without cargo and smoke-tested here and inside each root
# (script/matrix smoke trixie GEM, smoke ruby34 GEM).
FAT_GEM_ENVS = %w[trixie ruby34].freeze

desc "Build pkg/lease_machines-VERSION-x86_64-linux.gem for this Ruby and those of #{FAT_GEM_ENVS.join(', ')}, " \
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

# The darwin gems, cross-built here (rakelib/packaging/darwin.rb): they cannot
# be loaded on Linux, so each library is checked as a file instead
# (rakelib/packaging/darwin_check.rb). The release workflow builds the
# published ones on macOS runners and smoke-tests them there.
LeaseMachinesPackaging::DARWIN_TARGETS.each do |platform, target|
  desc "Cross-build pkg/lease_machines-VERSION-#{platform}.gem with zig and lld (Ruby DARWIN_RUBIES) and check its libraries"
  task "gem:darwin:#{platform}" do
    LeaseMachinesPackaging.timed("gem:darwin:#{platform}") do
      LeaseMachinesPackaging.darwin_tools
      rm_rf LeaseMachinesPackaging.libs_dir(platform)
      LeaseMachinesPackaging.darwin_minors.each { |minor| LeaseMachinesPackaging.build_darwin_library(platform, minor) }
      LeaseMachinesPackaging.pack(platform)
      gem = LeaseMachinesPackaging.gem_path(platform)
      LeaseMachinesPackaging.check_ruby_requirement(gem)
      minors = LeaseMachinesPackaging::DarwinCheck.check_gem(gem, min_macos: target.fetch(:macos))
      puts "#{File.basename(gem)}: Mach-O #{platform} libraries for ruby #{minors.join(', ')} checked"
    end
  end
end

desc "Cross-build the arm64-darwin and x86_64-darwin gems with zig and lld and check their libraries"
task "gem:darwin" => LeaseMachinesPackaging::DARWIN_TARGETS.keys.map { |platform| "gem:darwin:#{platform}" }

desc "Check a built darwin gem's libraries as Mach-O files (CPU, exports, what they bind to) and that it holds no Rust source"
task "gem:darwin:check", [:gem] do |_task, args|
  raise "usage: rake \"gem:darwin:check[pkg/lease_machines-VERSION-arm64-darwin.gem]\"" unless args[:gem]

  minors = LeaseMachinesPackaging::DarwinCheck.check_gem(args[:gem])
  puts "#{File.basename(args[:gem])}: libraries for ruby #{minors.join(', ')} checked"
end
