# frozen_string_literal: true

require "fileutils"
require "rubygems/package"
require_relative "platforms"

# Packing the gems: the source gem, and a platform gem from the staged
# libraries with the required_ruby_version of exactly the minors it holds.
module LeaseMachinesPackaging
  module_function

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
end
