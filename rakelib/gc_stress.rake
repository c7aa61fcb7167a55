# frozen_string_literal: true

require "etc"
require "rbconfig"
require "tmpdir"

# What `rake test:gc_stress` runs unless LEASE_MACHINES_GC_STRESS_FILES (a
# glob) says otherwise. GC.stress is there to catch the extension's GC bugs: a
# Ruby object a native object holds but does not mark, or uses after the
# collector moved it. Only a test that makes and uses the extension's objects
# in this process, under stress, can show one:
# - test/unit/ (one file per class) and test/properties/ (types, ranges,
#   copies, Marshal, GC and compaction, allocation, threads, hostile input);
# - test/stores/row_codec_test.rb: the native row codec, with no database.
# Left out since #29: test/docs/readme_test.rb, the README's and
# docs/API.md's examples. They call the native classes test/unit/ calls, in
# the same ways, and were the longest file under stress (158 s alone, 331 s
# in CI beside the other jobs: a quarter of the step).
# Left out, because every extension call they make happens in another Ruby
# process, which GC.stress (set in this one) does not reach:
# test/properties/class_resolution_test.rb (loads the gem in fresh Rubies),
# test/docs/demo_test.rb (bin/demo's story in processes of its own; its
# simulated story repeats calls the unit tests make) and test/packaging/ (the
# gemspec, and the loader in subprocesses). The store, fence, job, Rails and
# runtime suites are not run either: the store and fence suites switch stress
# off for themselves (forking thousands of decisions under it would take
# hours, test/stores/store_helper.rb), and they load pg and ActiveRecord,
# which slows every stressed test in the same process.
GC_STRESS_FILES = FileList["test/{unit,properties}/*_test.rb",
                           "test/stores/row_codec_test.rb"].exclude("test/properties/class_resolution_test.rb")

# Each file runs in a Ruby process of its own, as many at once as the
# machine has cores (at most 4; LEASE_MACHINES_GC_STRESS_JOBS sets it): under
# GC.stress every allocation runs a full collection, whose cost grows with
# the live heap, so a process holding one test file's objects runs it faster
# than one holding all of them, and the cores share the files. The largest
# files first: the longest runs start first.
module GcStressRun
  module_function

  def files
    pattern = ENV.fetch("LEASE_MACHINES_GC_STRESS_FILES", nil)
    (pattern ? FileList[pattern] : GC_STRESS_FILES).sort_by { |file| -File.size(file) }
  end

  def jobs
    Integer(ENV.fetch("LEASE_MACHINES_GC_STRESS_JOBS") { Etc.nprocessors.clamp(1, 4).to_s }, 10)
  end

  # Runs `file` stressed with its output in `log`. @return [Integer] the pid
  def start(file, log)
    Process.spawn({ "LEASE_MACHINES_GC_STRESS" => "1" }, RbConfig.ruby, "-w", "-Ilib", "-Itest", TEST_WATCHDOG, file,
                  *ENV.fetch("TESTOPTS", "").split, out: log, err: %i[child out])
  end

  # @return [Array<String>] the files whose process failed
  def run(dir)
    queue = files
    running = {}
    failed = []
    until queue.empty? && running.empty?
      while running.size < jobs && (file = queue.shift)
        log = File.join(dir, "#{running.size}-#{File.basename(file)}.log")
        running[start(file, log)] = [file, log, Process.clock_gettime(Process::CLOCK_MONOTONIC)]
      end
      pid, status = Process.wait2
      file, log, started = running.delete(pid)
      report(file, log, status, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
      failed << file unless status.success?
    end
    failed
  end

  def report(file, log, status, seconds)
    output = File.read(log)
    summary = output[/^\d+ runs, .*$/] || "no summary (#{status})"
    puts format("GC.stress %-45<file>s %<summary>s [%<seconds>.0fs]", file: file, summary: summary, seconds: seconds)
    puts output unless status.success?
  end
end

desc "Run the tests of the extension's objects with GC.stress on, a process per file " \
     "(slow; LEASE_MACHINES_GC_STRESS_FILES narrows it)"
task "test:gc_stress" => :compile do
  failed = Dir.mktmpdir("lease_machines_gc_stress") { |dir| GcStressRun.run(dir) }
  abort "GC.stress: #{failed.size} file(s) failed: #{failed.join(' ')}" unless failed.empty?
end
