# frozen_string_literal: true

require_relative "store_helper"
require_relative "../support/restart_cluster"
require_relative "../support/server_scripts"
require "open3"
require "lease_machines/fences/sqlite"

module LeaseMachines
  # A failover to an asynchronous standby that had not received a grant the
  # old primary had already returned (issue #26). The standby is stopped (cut
  # off) before the grant, the primary commits it and answers, the primary is
  # SIGKILLed, the standby is started and promoted, and the next acquire runs
  # on it: its history ends before the lost grant.
  #
  # With the default `tokens: :sequence` the promoted standby issues the lost
  # token again, to another holder, and a fence accepts both. With
  # `tokens: :clock_floor` a token is at least the store clock in
  # microseconds, so the promoted standby, issuing later, issues above the
  # lost token (docs/STORES.md, "Durability and failover").
  #
  # Two clusters of this test's own (RestartCluster: the test cluster's port
  # plus 21, the primary, and plus 22, the standby made from it by
  # pg_basebackup -R), removed in teardown.
  class PostgresFailoverTokenTest < Minitest::Test
    include StoreTestHelper
    include ServerScripts

    SCRIPT = File.expand_path("../../script/postgres", __dir__)
    PRIMARY = RestartCluster.environment(21)
    STANDBY = RestartCluster.environment(22)
    BINDIR = Dir["/usr/lib/postgresql/*/bin"].select { |dir| File.executable?(File.join(dir, "pg_ctl")) }.max

    def setup
      super
      skip "no PostgreSQL server binaries" unless BINDIR
      remove_servers(SCRIPT, [STANDBY, PRIMARY], "LEASE_MACHINES_PG_DIR")
      @primary_url = server_script(SCRIPT, PRIMARY, "start")
      base_backup
      @standby_url = server_script(SCRIPT, STANDBY, "start")
    end

    def teardown
      @stores&.each(&:close)
      remove_servers(SCRIPT, [STANDBY, PRIMARY], "LEASE_MACHINES_PG_DIR") if BINDIR
      super
    end

    def test_only_clock_floor_tokens_stay_above_a_grant_lost_in_a_failover
      @stores = [Stores::Postgres.new(@primary_url).setup!, Stores::Postgres.new(@primary_url, tokens: :clock_floor)]
      %w[sequence floor].zip(@stores).each do |name, store|
        lease = store.authority(name).acquire(owner: 1, ttl: 30).lease
        assert_same Decision::RELEASED, store.authority(name).release(owner: 1, token: lease.token)
      end
      replayed_on_standby

      server_script(SCRIPT, STANDBY, "stop") # cut off: what the primary commits now never reaches it
      lost = %w[sequence floor].zip(@stores).to_h do |name, store|
        [name, store.authority(name).acquire(owner: 2, ttl: 30).lease.token] # returned to its caller
      end
      kill_primary
      server_script(SCRIPT, STANDBY, "start")
      promote_standby

      @stores += [Stores::Postgres.new(@standby_url), Stores::Postgres.new(@standby_url, tokens: :clock_floor)]
      again = @stores.last(2).zip(%w[sequence floor]).to_h do |store, name|
        [name, store.authority(name).acquire(owner: 3, ttl: 30).lease.token]
      end

      assert_operator again.fetch("floor"), :>, lost.fetch("floor"),
                      "clock_floor: the promoted standby issues above the token the failover lost (#{lost} #{again})"
      assert_equal lost.fetch("sequence"), again.fetch("sequence"),
                   "sequence: the promoted standby issues the lost token again, to another holder (#{lost} #{again})"
    end

    # `lease_machines reconcile`'s call after the same failover: the fences
    # (in the protected data's own database, which did not fail over) saw
    # the lost grant's token; raising the promoted store to their marks
    # makes its next grant greater. The resource left unreconciled shows
    # what it prevents: the lost token issued again.
    def test_reconcile_raises_the_promoted_standby_above_the_grant_it_lost
      Dir.mktmpdir do |dir|
        fences = %w[plain reconciled].to_h { |name| [name, Fences::SQLite.new(File.join(dir, "#{name}.sqlite3")).setup!] }
        @stores = [Stores::Postgres.new(@primary_url).setup!]
        fences.each_key { |name| @stores.first.authority(name).acquire(owner: 1, ttl: 1, now: 1) }
        replayed_on_standby

        server_script(SCRIPT, STANDBY, "stop")
        lost = fences.to_h do |name, fence|
          token = @stores.first.authority(name).acquire(owner: 2, ttl: 30).lease.token
          fence.guard(name, token, owner: 2) { nil } # the lost grant's holder wrote
          [name, token]
        end
        kill_primary
        server_script(SCRIPT, STANDBY, "start")
        promote_standby

        promoted = Stores::Postgres.new(@standby_url)
        @stores << promoted
        report = promoted.reconcile(fences.fetch("reconciled")).first
        assert_equal [1, lost.fetch("reconciled")], [report.last_issued_before, report.last_issued]
        again = fences.keys.to_h { |name| [name, promoted.authority(name).acquire(owner: 3, ttl: 30).lease.token] }

        assert_equal lost.fetch("plain"), again.fetch("plain"), "unreconciled: the lost token is issued again"
        assert_operator again.fetch("reconciled"), :>, lost.fetch("reconciled"),
                        "reconciled: the promoted standby issues above the lost grant (#{lost} #{again})"
        assert_equal :written, fences.fetch("reconciled").guard("reconciled", again.fetch("reconciled"), owner: 3) {
          :written
        }
      ensure
        fences&.each_value(&:close)
      end
    end

    private

    def replayed_on_standby
      lsn = PG.connect(@primary_url) { |conn| conn.exec("SELECT pg_current_wal_lsn()").getvalue(0, 0) }
      PG.connect(@standby_url) do |conn|
        wait_for { conn.exec_params("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", [lsn]).getvalue(0, 0) == "t" }
      end
    end

    # SIGKILL, no shutdown: the postmaster, then its children (they would
    # also exit on their own once they see it gone).
    def kill_primary
      @stores.each(&:close)
      dir = PRIMARY.fetch("LEASE_MACHINES_PG_DIR")
      postmaster = Integer(File.readlines(File.join(dir, "postmaster.pid")).first, 10)
      children = `ps -o pid= --ppid #{postmaster}`.split.map { |pid| Integer(pid, 10) }
      ([postmaster] + children).each do |pid|
        Process.kill(:KILL, pid)
      rescue Errno::ESRCH
        nil
      end
      wait_for { !alive?(postmaster) }
    end

    def promote_standby
      run!(File.join(BINDIR, "pg_ctl"), "-D", STANDBY.fetch("LEASE_MACHINES_PG_DIR"), "-w", "-t", "30", "promote")
      PG.connect(@standby_url) { |conn| wait_for { conn.exec("SELECT pg_is_in_recovery()").getvalue(0, 0) == "f" } }
    end

    # The standby: a copy of the primary that streams from it, asynchronously
    # (no synchronous_standby_names), made by pg_basebackup -R.
    def base_backup
      run!(File.join(BINDIR, "pg_basebackup"), "-h", "127.0.0.1", "-p", PRIMARY.fetch("LEASE_MACHINES_PG_PORT"),
           "-U", "postgres", "-D", STANDBY.fetch("LEASE_MACHINES_PG_DIR"), "-R", "-X", "stream", "-c", "fast")
    end

    # PostgreSQL refuses to run as root: its tools run as postgres then (as in script/postgres).
    def run!(*command)
      command = ["runuser", "-u", "postgres", "--", *command] if Process.uid.zero?
      out, err, status = Open3.capture3(*command)
      assert_predicate status, :success?, "#{command.join(' ')} failed: #{out}#{err}"
    end
  end
end
