# frozen_string_literal: true

require "open3"
require "rbconfig"
require "stringio"
require "test_helper"

# bin/demo only prepares the machine and runs when it is the program itself;
# loaded here it defines the stories, which run against the library under test.
load File.expand_path("../../script/demo.rb", __dir__)

module LeaseMachines
  # The demo's real story, run as bin/demo runs it (script/demo.rb in a Ruby
  # process of its own, forking its workers): worker 7 is stopped with
  # SIGSTOP between its lease check and its write, worker 12 takes the lease
  # and writes, worker 7 resumes. Through the fence its write is refused;
  # without the fence (the protection switched off) it overwrites worker 12's
  # report.
  class DemoTest < Minitest::Test
    ROOT = File.expand_path("../..", __dir__)
    DEMO = File.join(ROOT, "script", "demo.rb")
    LINE = /\At=\s*(?<time>\d+\.\d\d)s  (?<who>supervisor|worker 7 |worker 12)\s+(?<text>.*)\z/

    def demo(*args, ruby: [DEMO])
      Open3.capture3(RbConfig.ruby, "-I", File.join(ROOT, "lib"), *ruby, *args, chdir: ROOT)
    end

    def timeline(out)
      out.lines(chomp: true).grep(/\At=/).map { |line| LINE.match(line) or flunk "not a timeline line: #{line.inspect}" }
    end

    def test_the_fenced_round_refuses_the_stale_write
      out, err, status = demo("--round", "fenced")
      assert_predicate status, :success?, err

      lines = timeline(out)
      times = lines.map { |line| Float(line[:time]) }
      assert_operator times.first, :<, 1.0
      times.each_cons(2) do |before, after|
        assert_operator after, :>=, before - 0.02, "the timeline goes forward (two processes may swap lines within a tick)"
      end
      texts = lines.map { |line| "#{line[:who].strip}: #{line[:text]}" }
      assert_includes texts, "worker 12: guarded write \"report by worker 12\" with token 2 -> accepted"
      assert_includes texts, "worker 7: guarded write with token 1 -> REFUSED by the fence: \"nightly-report\" refused " \
                             "token 1: it has already accepted token 2"
      stop = texts.index { |text| text.start_with?("supervisor: SIGSTOP worker 7") }
      resume = texts.index { |text| text.start_with?("supervisor: SIGCONT worker 7") }
      refused = texts.index { |text| text.include?("REFUSED") }
      assert_operator stop, :<, resume
      assert_operator resume, :<, refused
      assert_operator Float(lines[resume][:time]) - Float(lines[stop][:time]), :>=, 1.5, "worker 7 was stopped past its TTL"
      assert_equal "supervisor: the report is \"report by worker 12\", written by worker 12 with token 2",
                   texts.last
    end

    def test_without_the_fence_the_stale_write_overwrites_the_successors_report
      out, err, status = demo("--round", "unfenced")
      assert_predicate status, :success?, err
      assert_match(/worker 12 +plain write "report by worker 12" with token 2 -> written/, out)
      assert_match(/supervisor  the report is "stale draft by worker 7", written by worker 7 with token 1$/, out)
      assert_match(/^Without the fence: worker 7's late write replaced worker 12's report/, out)
    end

    # The protection switched off inside the demo's own process: a guard that
    # runs the block without raising the mark. The demo must notice and fail.
    def test_the_demo_exits_non_zero_when_the_fence_lets_the_stale_write_through
      broken = <<~RUBY
        load #{DEMO.inspect}
        require "lease_machines/fences/sqlite"
        LeaseMachines::Fences::Table.prepend(Module.new { def guard(_r, _t) = @source.with { |s| yield s.connection } })
        exit LeaseMachinesDemo.main(%w[--round fenced])
      RUBY
      out, _err, status = demo(ruby: ["-e", broken])
      assert_equal 1, status.exitstatus
      assert_match(/the report is "stale draft by worker 7"/, out)
      assert_match(/^FAILED: the fence let worker 7's stale write through\.$/, out)
    end

    def test_both_rounds_on_sqlite_tell_the_story
      out, err, status = demo
      assert_predicate status, :success?, err
      assert_match(/\Alease_machines #{Regexp.escape(VERSION)}: one report, two worker processes, a 1.5 s lease /, out)
      assert_match(/ lease \(SQLite files in /, out)
      assert_match(/^Round 1: every write goes through the fence$.*^Round 2: the same story without the fence$/m, out)
      assert_equal ["With the fence: worker 12's report stands; worker 7's late write (token 1) was refused because the " \
                    "fence had already accepted token 2.",
                    "Without the fence: worker 7's late write replaced worker 12's report, though its lease had run out."],
                   out.lines(chomp: true).last(2)
      refute(Dir.glob(File.join(Dir.tmpdir, "lease_machines_demo*")).any? { |dir| out.include?(dir) },
             "the demo removes its temporary folder")
    end

    def test_the_same_story_runs_on_postgres
      url = ENV.fetch("DATABASE_URL", "postgres://postgres@127.0.0.1:54329/lease_machines_test")
      out, err, status = demo("--store", url, "--round", "fenced")
      assert_predicate status, :success?, err
      assert_match(/\(PostgreSQL, schema lm_demo_\d+ \(dropped afterwards\)\)/, out)
      assert_match(/REFUSED by the fence: "nightly-report" refused token 1: it has already accepted token 2/, out)
    end

    def test_bad_arguments_print_the_usage_and_exit_with_status_two
      [%w[--round twice], %w[--store mysql://db/app], %w[extra]].each do |args|
        _out, err, status = demo(*args)
        assert_equal 2, status.exitstatus, args.inspect
        assert_match(%r{\Abin/demo: .*\nusage: bin/demo \[--store postgres://\.\.\.\]}, err)
      end
    end

    # bin/demo is a shell script, so that it runs on a machine with no Ruby
    # yet: it prepares the machine, then tells the story, passing its
    # arguments on.
    def test_the_demo_is_executable_and_prepares_the_machine_first
      path = File.expand_path("../../bin/demo", __dir__)
      lines = File.readlines(path, chomp: true)

      assert File.executable?(path), "bin/demo must be executable"
      assert_equal "#!/usr/bin/env bash", lines.first
      setup = lines.index { |line| line.start_with?("bin/setup") }
      story = lines.index { |line| line.include?("script/demo.rb") }
      refute_nil setup, "bin/demo must run bin/setup"
      refute_nil story, "bin/demo must run script/demo.rb"
      assert_operator setup, :<, story
      assert_includes lines[story], '"$@"'
    end
  end

  # `bin/demo --simulated`: the story on a simulated clock, in one process,
  # with the in-memory Authority, Fence and Holder of the README.
  class SimulatedDemoTest < Minitest::Test
    def tell
      out = StringIO.new
      store = LeaseMachinesDemo.run_simulated(out)
      [store, out.string]
    end

    def test_the_successor_keeps_the_report
      store, = tell

      assert_equal "report by worker 12", store.report
      assert_equal 12, store.writer
      assert_equal 2, store.highest
    end

    def test_the_timeline_tells_the_story_in_order
      _, text = tell
      lines = text.lines.grep(/\At=/)
      times = lines.map { |line| Float(line[/\At=\s*([\d.]+)s/, 1]) }

      assert_equal times.sort, times, "the timeline goes back in time"
      assert_equal 0.0, times.first
      assert_match(/worker 7 +acquire -> granted, token 1, lease until t=30.0s/, text)
      assert_match(/worker 12 +acquire -> granted, token 2, lease until t=61.0s/, text)
      assert_match(/worker 7 +renew token 1 -> rejected \(stale_token\)/, text)
      assert_match(/"stale draft by worker 7" with token 1 -> REFUSED by the fence/, text)
      assert_match(/holder state: fenced/, text)
    end

    def test_the_last_line_states_the_outcome
      _, text = tell

      assert_equal 'Outcome: the report is "report by worker 12", written by worker 12; worker 7\'s late write ' \
                   "(token 1) was turned away because the store had already accepted token 2.", text.lines.last.chomp
    end

    def test_the_story_is_the_same_every_time
      assert_equal tell.last, tell.last
    end

    def test_the_store_refuses_a_token_older_than_one_it_accepted
      store = LeaseMachinesDemo::ReportStore.new

      assert store.write(token: 2, writer: 12, text: "new")
      refute store.write(token: 1, writer: 7, text: "old")
      assert store.write(token: 2, writer: 12, text: "newer")
      assert_equal "newer", store.report
    end

    def test_simulated_is_a_demo_option
      out, status = Open3.capture2(RbConfig.ruby, "-I", File.join(DemoTest::ROOT, "lib"), DemoTest::DEMO, "--simulated")
      assert_predicate status, :success?
      assert_equal tell.last, out
    end
  end
end
