# frozen_string_literal: true

require "stringio"
require "test_helper"

# bin/demo only prepares the machine and runs when it is the program itself;
# loaded here it defines the story, which runs against the library under test.
load File.expand_path("../../script/demo.rb", __dir__)

module LeaseMachines
  # The demo's story: worker 7 stalls, worker 12 takes over, the fence turns
  # worker 7's late write away.
  class DemoTest < Minitest::Test
    def tell
      out = StringIO.new
      store = LeaseMachinesDemo.run(out)
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

    # bin/demo is a shell script, so that it runs on a machine with no Ruby
    # yet: it prepares the machine, then tells the story.
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
    end

    def test_the_store_refuses_a_token_older_than_one_it_accepted
      store = LeaseMachinesDemo::ReportStore.new

      assert store.write(token: 2, writer: 12, text: "new")
      refute store.write(token: 1, writer: 7, text: "old")
      assert store.write(token: 2, writer: 12, text: "newer")
      assert_equal "newer", store.report
    end
  end
end
