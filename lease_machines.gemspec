# frozen_string_literal: true

require_relative "lib/lease_machines/version"

Gem::Specification.new do |spec|
  spec.name = "lease_machines"
  spec.version = LeaseMachines::VERSION
  spec.authors = ["lease_machines contributors"]
  spec.email = ["oss@seuros.com"]

  spec.summary = "Leases with fencing tokens for Ruby jobs: the stalled worker finds the door shut."
  spec.description = <<~DESC.tr("\n", " ").strip
    Time-limited ownership of a resource for Rails jobs and Sidekiq workers. Every grant
    carries a fencing token greater than the last, and a fence at the resource refuses
    older tokens, so a worker that wakes from a long pause cannot overwrite its successor.
    Decisions come from a deterministic Rust core.
  DESC
  spec.homepage = "https://github.com/seuros/lease_machines"
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1"

  spec.metadata = {
    "homepage_uri" => spec.homepage,
    "source_code_uri" => spec.homepage,
    "changelog_uri" => "#{spec.homepage}/blob/main/CHANGELOG.md",
    "bug_tracker_uri" => "#{spec.homepage}/issues",
    "cargo_crate_name" => "lease_machines_native",
    "cargo_manifest_path" => "ext/lease_machines_native/Cargo.toml",
    "rubygems_mfa_required" => "true"
  }

  # The source gem: the Ruby code plus everything cargo needs to build the
  # extension at install time (the workspace manifest and lock, both crates'
  # manifests and sources, and the core's bench target, which its manifest
  # declares). No tests, no build output. Platform gems replace the Rust part
  # with compiled libraries (rakelib/pkg.rake).
  spec.files = Dir.glob(
    [
      "lib/**/*.rb", "lib/lease_machines/web/views/*.erb", "lib/generators/**/templates/*.tt", "sig/**/*.rbs", "exe/*",
      "ext/lease_machines_native/{extconf.rb,Cargo.toml,src/**/*.rs}",
      "core/{Cargo.toml,README.md,CHANGELOG.md,src/**/*.rs,benches/*.rs}",
      "db/**/*.sql", "Cargo.toml", "Cargo.lock",
      "README.md", "CHANGELOG.md", "LICENSE{,.txt,.md}"
    ],
    base: __dir__
  ).sort
  spec.bindir = "exe"
  spec.executables = Dir.glob("exe/*", base: __dir__).map { |path| File.basename(path) }
  spec.require_paths = ["lib"]
  spec.extensions = ["ext/lease_machines_native/extconf.rb"]
end
