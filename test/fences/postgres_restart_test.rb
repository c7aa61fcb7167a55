# frozen_string_literal: true

require_relative "fence_helper"
require "open3"
require "lease_machines/fences/postgres"
require_relative "../support/restart_cluster"

module LeaseMachines
  # The fence outlives restarts of the resource's database (the persistence
  # contract, promise 5). A PostgreSQL cluster of this test's own
  # (RestartCluster: the test cluster's port plus 11), started and stopped
  # with script/postgres.
  class PostgresRestartTest < Minitest::Test
    include FenceTestHelper

    SCRIPT = File.expand_path("../../script/postgres", __dir__)
    CLUSTER = RestartCluster.environment(11)

    def setup
      super
      @url = cluster("start")
      conn = PG.connect(@url)
      conn.exec("SET client_min_messages = warning")
      # The table setup! creates now is the one under test, not one a
      # previous run left in this cluster.
      conn.exec("DROP TABLE IF EXISTS lease_machines_fences")
      conn.exec(FenceTestHelper::REPORTS_SQL)
      conn.close
      @fences = Fences::Postgres.new(@url).setup!
    end

    def teardown
      @fences&.close
      cluster("stop")
      super
    end

    def cluster(command)
      out, err, status = Open3.capture3(CLUSTER, SCRIPT, command)
      assert_predicate status, :success?, "script/postgres #{command} failed: #{err}"
      out.strip
    end

    def committed_body(name)
      conn = PG.connect(@url)
      conn.exec_params("SELECT body FROM #{REPORTS} WHERE name = $1", [name]).values.dig(0, 0)
    ensure
      conn&.close
    end

    def guard_write(resource, token)
      @fences.guard(resource, token) { |conn| conn.exec_params(POSTGRES_UPSERT, [resource, "by token #{token}"]) }
    end

    def assert_the_fence_remembers(resource)
      assert_equal 5, @fences.highest(resource), "the mark must survive the restart"
      assert_fenced(resource, 4, 5) { guard_write(resource, 4) }
      assert_equal "by token 5", committed_body(resource)
      guard_write(resource, 5)
      guard_write(resource, 6)
      assert_equal "by token 6", committed_body(resource)
    end

    def test_the_mark_survives_a_clean_restart_of_the_server
      resource = unique_name("restart")
      guard_write(resource, 5)
      @fences.close
      cluster("stop")
      assert_raises(PG::ConnectionBad) { PG.connect(@url).close }

      assert_equal @url, cluster("start")
      assert_the_fence_remembers(resource)
    end

    # A fence on a URL guards again once its server is back, however many
    # guards failed while it was down (pg finishes a connection whose reset
    # failed: the fence opens a new one).
    def test_a_fence_on_a_url_reconnects_after_the_server_was_down
      resource = unique_name("outage")
      guard_write(resource, 5)
      cluster("stop")
      2.times { assert_raises(StoreError) { guard_write(resource, 6) } }
      cluster("start")

      guard_write(resource, 6)
      assert_equal ["by token 6", 6], [committed_body(resource), @fences.highest(resource)]
    end

    # A fence on the caller's own PG::Connection reconnects that connection
    # in place once the server is back, as a store on it does: it never
    # finishes it (pg's `reset` does, when the server is still down).
    def test_a_fence_on_the_callers_connection_reconnects_it_after_the_server_was_down
      conn = PG.connect(@url)
      fences = Fences::Postgres.new(conn)
      resource = unique_name("outage-connection")
      fences.guard(resource, 5) { |c| c.exec_params(POSTGRES_UPSERT, [resource, "by token 5"]) }
      cluster("stop")
      2.times { assert_raises(StoreError) { fences.guard(resource, 6) { flunk "ran" } } }
      refute_predicate conn, :finished?, "the caller's connection stays open"
      cluster("start")

      fences.guard(resource, 6) { |c| c.exec_params(POSTGRES_UPSERT, [resource, "by token 6"]) }
      assert_equal ["by token 6", 6], [committed_body(resource), fences.highest(resource)]
    ensure
      conn&.finish unless conn&.finished?
    end

    # `pg_ctl stop -m immediate` ends the server without a shutdown
    # checkpoint, as a crash or a power cut would: the next start replays the
    # write-ahead log. A guard that returned had committed, so its mark is in
    # the log.
    def test_the_mark_survives_a_crash_of_the_server
      resource = unique_name("crash")
      guard_write(resource, 5)
      @fences.close
      crash
      assert_raises(PG::ConnectionBad) { PG.connect(@url).close }

      cluster("start")
      assert_the_fence_remembers(resource)
    end

    private

    def crash
      pg_ctl = Dir["/usr/lib/postgresql/*/bin/pg_ctl"].max
      command = [pg_ctl, "-D", CLUSTER.fetch("LEASE_MACHINES_PG_DIR"), "-m", "immediate", "stop"]
      command = ["runuser", "-u", "postgres", "--", *command] if Process.uid.zero?
      _out, err, status = Open3.capture3(*command)
      assert_predicate status, :success?, "pg_ctl stop -m immediate failed: #{err}"
    end
  end
end
