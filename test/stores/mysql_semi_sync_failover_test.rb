# frozen_string_literal: true

require_relative "store_helper"
require_relative "../support/mysql_server"
require_relative "../support/restart_cluster"
require_relative "../support/server_scripts"
require "lease_machines/stores/mysql"
require "lease_machines/fences/mysql"
require "lease_machines/fences/active_record"
require "active_record"
require "open3"

module LeaseMachines
  class SemiSyncReportBase < ::ActiveRecord::Base
    self.abstract_class = true
  end

  # MariaDB semi-synchronous replication falling back to asynchronous
  # (issue #26): a primary and a semi-sync replica on loopback, GTID
  # replication, rpl_semi_sync_master_timeout 500 ms, wait point AFTER_SYNC.
  # The replica's IO thread is stopped; a grant then waits the timeout,
  # commits as asynchronous and returns granted, and the primary says so to
  # nobody but `store.durability`. The primary is SIGKILLed and the replica
  # promoted (STOP SLAVE; RESET SLAVE ALL; read_only = 0): its history ends
  # before the grant.
  #
  # Under `tokens: :sequence` the promoted replica issues the lost token
  # again, to another holder, and every fence that records the owner with its
  # mark refuses the first holder's late write (a guard on the test server,
  # which did not fail over; a signed guard; a strict guard in the store's
  # database; a fenced ActiveRecord row). Under `tokens: :clock_floor` the
  # promoted replica issues above the lost token.
  #
  # Two servers of this test's own (script/mysql with the test server's port
  # plus 12, the primary, and plus 10, the replica), removed in teardown.
  class MySQLSemiSyncFailoverTest < Minitest::Test
    include StoreTestHelper
    include ServerScripts

    SCRIPT = File.expand_path("../../script/mysql", __dir__)
    BASE_PORT = URI(MySQLServer.base_url).port || 33_069
    KEY = "the store's signing key, 32 bytes and more"
    TIMEOUT_MS = 500
    FENCED = %w[plain signed strict row].freeze

    def self.server(offset, options)
      port = RestartCluster.outside_ephemeral(BASE_PORT + offset)
      { "LEASE_MACHINES_MYSQL_PORT" => port.to_s, "LEASE_MACHINES_MYSQL_DIR" => "/tmp/lm_semi_sync_mysql_#{port}",
        "LEASE_MACHINES_MYSQL_OPTIONS" => options }.freeze
    end
    PRIMARY = server(12, "--server-id=1 --log-bin=mysql-bin --sync-binlog=1 --binlog-format=ROW")
    REPLICA = server(10, "--server-id=2")

    def setup
      super
      skip "semi-sync is MariaDB's here" unless File.executable?("/usr/sbin/mariadbd")
      remove_servers(SCRIPT, [REPLICA, PRIMARY], "LEASE_MACHINES_MYSQL_DIR")
      @closing = []
      # One after the other (about 5 s each): two mariadb-install-db at once
      # share /tmp, and one deleted the other's temporary table (sid, once).
      @primary_url, @replica_url = [PRIMARY, REPLICA].map { |env| server_script(SCRIPT, env, "start") }
      @primary = client(@primary_url)
      @replica = client(@replica_url)
      semi_sync
    end

    def teardown
      @closing&.each(&:close)
      SemiSyncReportBase.remove_connection if SemiSyncReportBase.connected?
      remove_servers(SCRIPT, [REPLICA, PRIMARY], "LEASE_MACHINES_MYSQL_DIR")
      super
    end

    def test_a_grant_acknowledged_after_the_fallback_is_lost_and_only_fences_that_record_the_owner_refuse_its_reissue
      names = (FENCED + ["floor"]).to_h { |kind| [kind, unique_name(kind)] }
      sequence = store(@primary_url, signing_keys: [KEY]).setup!
      floor = store(@primary_url, tokens: :clock_floor)
      stores = FENCED.to_h { |kind| [kind, sequence] }.merge("floor" => floor)
      stores.each do |kind, each|
        lease = each.authority(names.fetch(kind)).acquire(owner: 1, ttl: 30).lease
        each.authority(names.fetch(kind)).release(owner: 1, token: lease.token)
      end
      assert_equal "ON", sequence.durability.settings.fetch("rpl_semi_sync_master_status")
      assert_equal :survives_crash, sequence.durability.verdict, "semi-sync on, but it can fall back"
      refused = assert_raises(StoreError) do
        store(@primary_url, durability: :strict).authority(names.fetch("plain")).acquire(owner: 9, ttl: 30)
      end
      assert_includes refused.message, "semi-sync falls back to async after #{TIMEOUT_MS} ms (rpl_semi_sync_master_timeout)"
      replica_caught_up
      strict_fences = fences(@primary_url, store: true, strict: true).setup! # replicated: the promoted one has it

      @replica.query("STOP SLAVE IO_THREAD")
      started = monotonic
      lost = stores.to_h { |kind, each| [kind, each.authority(names.fetch(kind)).acquire(owner: 2, ttl: 30).lease] }
      assert_operator monotonic - started, :>=, TIMEOUT_MS / 1000.0 * 0.9, "the first grant waited for the replica"
      assert lost.each_value.all? { |lease| lease.token.positive? }, "every grant was returned to its caller"
      fallen_back = sequence.durability
      assert_equal :survives_crash, fallen_back.verdict
      assert_match(/has fallen back to asynchronous/, fallen_back.reasons.join)
      assert_match(/\d+ commits were acknowledged without a replica's answer/, fallen_back.reasons.join)

      strict_fences.close
      kill_primary
      promote_replica

      promoted = store(@replica_url, signing_keys: [KEY])
      promoted_floor = store(@replica_url, tokens: :clock_floor)
      again = FENCED.to_h { |kind| [kind, promoted.authority(names.fetch(kind)).acquire(owner: 3, ttl: 30).lease] }
      floor_again = promoted_floor.authority(names.fetch("floor")).acquire(owner: 3, ttl: 30).lease

      assert_operator floor_again.token, :>, lost.fetch("floor").token,
                      "clock_floor: the promoted replica issues above the lost token"
      FENCED.each do |kind|
        assert_equal [lost.fetch(kind).token, 3], [again.fetch(kind).token, again.fetch(kind).owner],
                     "sequence (#{kind}): the promoted replica issues the lost token again, to another holder"
      end

      guards = { "plain" => fences(MySQLServer.url).setup!,
                 "signed" => fences(MySQLServer.url, signing_keys: [KEY]).setup!,
                 "strict" => fences(@replica_url, store: true, strict: true) }
      guards.each do |kind, fence|
        name = names.fetch(kind)
        assert_equal :new_holder, fence.guard(name, again.fetch(kind)) { :new_holder }, kind
        error = assert_raises(ReissuedTokenError, "#{kind}: the first holder's late write") do
          fence.guard(name, lost.fetch(kind)) { flunk "#{kind}: the late write ran" }
        end
        assert_equal [3, 2], [error.recorded_owner, error.owner], kind
      end

      model = row_model
      report = model.create!(name: names.fetch("row"), body: "before")
      assert report.fenced_update!(Fences::Pass.new(names.fetch("row"), again.fetch("row")), body: "by 3")
      error = assert_raises(ReissuedTokenError, "row: the first holder's late write") do
        report.reload.fenced_update!(Fences::Pass.new(names.fetch("row"), lost.fetch("row")), body: "late, by 2")
      end
      assert_equal [3, 2], [error.recorded_owner, error.owner]
      assert_equal "by 3", model.find(report.id).body
    end

    private

    def monotonic
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    def store(url, **options)
      opened(Stores::MySQL.new(url, **options))
    end

    def fences(url, **options)
      opened(Fences::MySQL.new(url, **options))
    end

    def opened(closable)
      @closing << closable
      closable
    end

    def client(url)
      uri = URI(url)
      opened(Mysql2::Client.new(host: uri.host, port: uri.port, username: "root", database: uri.path.delete_prefix("/")))
    end

    # A fenced model with the owner column, on the test server (the data's
    # database, which does not fail over).
    def row_model
      SemiSyncReportBase.establish_connection(MySQLServer.url) unless SemiSyncReportBase.connected?
      schema = SemiSyncReportBase.connection
      schema.create_table(:semi_sync_reports, force: true) do |t|
        t.string :name, null: false
        t.text :body
        t.decimal :lease_token, precision: 20, scale: 0
        t.decimal :lease_owner, precision: 20, scale: 0
      end
      Class.new(SemiSyncReportBase) do
        self.table_name = "semi_sync_reports"
        def self.name = "SemiSyncReport"
        include Fences::Record
        fenced_by :lease_token
      end
    end

    # Semi-sync on both sides, the replica following the primary by GTID,
    # until the primary counts it as its semi-sync client.
    def semi_sync
      @primary.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
      @primary.query("SET GLOBAL rpl_semi_sync_master_timeout = #{TIMEOUT_MS}")
      @primary.query("SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC")
      @replica.query("SET GLOBAL rpl_semi_sync_slave_enabled = ON")
      @replica.query("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = #{URI(@primary_url).port}, " \
                     "MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos")
      @replica.query("START SLAVE")
      @replica.query("SET GLOBAL read_only = ON")
      wait_for do
        status(@primary, "Rpl_semi_sync_master_clients") == "1" && status(@primary, "Rpl_semi_sync_master_status") == "ON"
      end
    end

    def replica_caught_up
      position = @primary.query("SELECT @@GLOBAL.gtid_binlog_pos", as: :array).first.first
      wait_for { @replica.query("SELECT @@GLOBAL.gtid_slave_pos", as: :array).first.first == position }
    end

    def status(client, name)
      client.query("SHOW GLOBAL STATUS LIKE '#{name}'", as: :array).first&.last
    end

    # SIGKILL, no shutdown.
    def kill_primary
      @primary.close
      pid = Integer(File.read(File.join(PRIMARY.fetch("LEASE_MACHINES_MYSQL_DIR"), "mysqld.pid")), 10)
      Process.kill(:KILL, pid)
      wait_for { !alive?(pid) }
    end

    def promote_replica
      @replica.query("STOP SLAVE")
      @replica.query("RESET SLAVE ALL")
      @replica.query("SET GLOBAL read_only = OFF")
    end
  end
end
