# frozen_string_literal: true

require "minitest/autorun"
require_relative "../../lib/lease_machines/version"

# What the source gem declares and ships, checked without building it (the built
# gems are installed and exercised by `rake gem:smoke`).
class PackagingTest < Minitest::Test
  ROOT = File.expand_path("../..", __dir__)
  EXT_DIR = "ext/lease_machines_native"

  def spec
    @spec ||= Gem::Specification.load(File.join(ROOT, "lease_machines.gemspec"))
  end

  def read(path)
    File.read(File.join(ROOT, path))
  end

  # The `key = value` lines of one `[section]` of a TOML file (enough for our manifests).
  def toml_section(text, name)
    body = text[/^\[#{Regexp.escape(name)}\]\s*\n(.*?)(?=^\[|\z)/m, 1]
    refute_nil body, "no [#{name}] section"
    body
  end

  def toml_string(section, key)
    section[/^#{Regexp.escape(key)}\s*=\s*"([^"]*)"/, 1]
  end

  def crate_version(manifest)
    package = toml_section(read(manifest), "package")
    return workspace_version if package.match?(/^version\.workspace\s*=\s*true/) ||
                                package.match?(/^version\s*=\s*\{\s*workspace\s*=\s*true\s*\}/)

    toml_string(package, "version")
  end

  def workspace_version
    toml_string(toml_section(read("Cargo.toml"), "workspace.package"), "version")
  end

  def workspace_members
    read("Cargo.toml")[/^members\s*=\s*\[(.*?)\]/m, 1].scan(/"([^"]+)"/).flatten
  end

  def test_every_version_is_the_gem_version
    version = LeaseMachines::VERSION
    assert_equal version, spec.version.to_s
    assert_equal version, workspace_version, "[workspace.package] version in Cargo.toml"
    assert_equal version, crate_version("core/Cargo.toml"), "core crate version"
    assert_equal version, crate_version("#{EXT_DIR}/Cargo.toml"), "extension crate version"

    dependency = read("#{EXT_DIR}/Cargo.toml")[/^lease-machines\s*=\s*\{([^}]*)\}/, 1]
    refute_nil dependency, "the extension depends on lease-machines"
    assert_equal "=#{version}", dependency[/version\s*=\s*"([^"]*)"/, 1],
                 "the extension pins the core crate to exactly the gem version"

    # `gem install` builds with --locked: a stale lock fails every install.
    lock = read("Cargo.lock")
    %w[lease-machines lease_machines_native].each do |crate|
      assert_equal version, lock[/^name = "#{crate}"\nversion = "([^"]+)"/, 1], "#{crate} in Cargo.lock"
    end
  end

  def test_files_hold_everything_cargo_needs
    files = spec.files
    required = %W[
      Cargo.toml Cargo.lock core/Cargo.toml core/src/lib.rs
      #{EXT_DIR}/extconf.rb #{EXT_DIR}/Cargo.toml #{EXT_DIR}/src/lib.rs
      lib/lease_machines.rb lib/lease_machines/native.rb lib/lease_machines/version.rb
    ]
    assert_empty required - files

    workspace_members.each do |member|
      assert_includes files, "#{member}/Cargo.toml"
      sources = Dir.glob("#{member}/src/**/*.rs", base: ROOT)
      assert_empty sources - files, "every Rust source of #{member}"
      # cargo refuses a manifest whose declared targets have no file: [[bench]] and friends.
      manifest = read("#{member}/Cargo.toml")
      { "bench" => "benches", "test" => "tests", "example" => "examples", "bin" => "src/bin" }.each do |kind, dir|
        manifest.scan(/^\[\[#{kind}\]\]\s*\n(.*?)(?=^\[|\z)/m).flatten.each do |target|
          path = toml_string(target, "path") || "#{dir}/#{toml_string(target, 'name')}.rs"
          assert_includes files, "#{member}/#{path}", "the #{kind} target declared in #{member}/Cargo.toml"
        end
      end
    end
  end

  def test_files_leave_out_tests_and_build_output
    files = spec.files
    missing = files.reject { |file| File.file?(File.join(ROOT, file)) }
    assert_empty missing, "files that do not exist"
    assert_empty files.grep(%r{\A(test|spec|bench|tmp|pkg|target|bin)/}), "no tests, scripts or build output"
    assert_includes files, "db/postgres/001_create_lease_machines_resources.sql", "the schema the stores run"
    views = Dir.glob("lib/lease_machines/web/views/*.erb", base: ROOT)
    refute_empty views
    assert_empty views - files, "the web UI's templates"
    assert_empty files.grep(%r{\A(core|#{EXT_DIR})/(tests|target)/}), "no crate tests or target/"
    assert_empty files.grep(%r{\.(so|bundle|dll|o|gem)\z|(\A|/)(Makefile|mkmf\.log)\z}), "no compiled files"
  end

  def test_the_extension_is_declared
    assert_equal ["#{EXT_DIR}/extconf.rb"], spec.extensions
    assert_equal ["lib"], spec.raw_require_paths
    assert_equal "ruby", spec.platform.to_s
  end

  def test_description_and_metadata
    refute_empty spec.summary.to_s
    assert_operator spec.description.to_s.length, :>, spec.summary.length
    assert_match %r{\Ahttps://}, spec.homepage
    assert_equal ["MIT"], spec.licenses
    assert spec.required_ruby_version.satisfied_by?(Gem::Version.new("3.1.0"))
    refute spec.required_ruby_version.satisfied_by?(Gem::Version.new("3.0.7"))

    metadata = spec.metadata
    %w[homepage_uri source_code_uri changelog_uri].each do |key|
      assert_match(/\A#{Regexp.escape(spec.homepage)}/, metadata[key].to_s, key)
    end
    manifest = metadata["cargo_manifest_path"]
    assert_equal "#{EXT_DIR}/Cargo.toml", manifest
    assert_includes spec.files, manifest
    assert_equal toml_string(toml_section(read(manifest), "package"), "name"), metadata["cargo_crate_name"]
  end
end
