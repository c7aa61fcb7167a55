# frozen_string_literal: true

# Loads lease_machines for a benchmark from lib/ (or BENCH_LIB), but the
# compiled extension from a private copy: `rake compile` in the same tree
# rewrites lib/lease_machines_native/*.so in place, and a process that has the
# library mapped while that happens crashes. Benchmarks run for minutes, so
# they get their own copy.

require "fileutils"
require "rbconfig"
require "tmpdir"

lib = File.expand_path(ENV.fetch("BENCH_LIB", "../lib"), __dir__)
$LOAD_PATH.unshift(lib)
built = File.join(lib, "lease_machines_native", "lease_machines_native.#{RbConfig::CONFIG.fetch('DLEXT')}")
if File.exist?(built)
  private_dir = Dir.mktmpdir("lease_machines_bench")
  FileUtils.mkdir_p(File.join(private_dir, "lease_machines_native"))
  FileUtils.cp(built, File.join(private_dir, "lease_machines_native"))
  $LOAD_PATH.unshift(private_dir)
  at_exit { FileUtils.remove_entry(private_dir) }
end
require "lease_machines"
