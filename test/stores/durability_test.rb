# frozen_string_literal: true

require_relative "store_helper"
require "lease_machines/stores/memory"

module LeaseMachines
  # Store#durability: what each engine's settings promise about a grant the
  # store acknowledged. The verdict rules on given settings, then each engine
  # read from a real database (MySQL's in mysql_durability_test.rb, a
  # synchronous standby's in postgres_unreplicated_commit_test.rb).
  class DurabilityTest < Minitest::Test
    include StoreTestHelper

    POSTGRES = { "synchronous_commit" => "on", "synchronous_standby_names" => "", "fsync" => "on",
                 "in_recovery" => "f", "sync_standbys" => "0", "timeline" => "1" }.freeze
    MYSQL = { "innodb_flush_log_at_trx_commit" => "1", "log_bin" => "ON", "sync_binlog" => "1",
              "read_only" => "OFF" }.freeze

    def test_postgres_verdicts_from_the_strongest_to_the_weakest
      synchronous = POSTGRES.merge("synchronous_standby_names" => "FIRST 1 (replica)", "sync_standbys" => "1")

      assert_equal :survives_failover, Stores::Durability.postgres(synchronous).verdict
      assert_equal :survives_crash, Stores::Durability.postgres(POSTGRES).verdict
      assert_equal :survives_crash, Stores::Durability.postgres(synchronous.merge("synchronous_commit" => "local")).verdict
      assert_equal :loses_on_crash, Stores::Durability.postgres(synchronous.merge("synchronous_commit" => "off")).verdict
      assert_equal :loses_on_crash, Stores::Durability.postgres(POSTGRES.merge("fsync" => "off")).verdict
      assert_equal :read_only, Stores::Durability.postgres(synchronous.merge("in_recovery" => "t")).verdict
    end

    def test_postgres_reasons_name_the_settings_an_operator_changes
      remote_write = POSTGRES.merge("synchronous_standby_names" => "replica", "synchronous_commit" => "remote_write")
      reasons = Stores::Durability.postgres(remote_write).reasons

      assert_includes reasons, "synchronous_commit = remote_write waits for replica"
      assert_includes reasons, "no synchronous standby is connected now: commits wait until one is"
      assert_match(/both servers/, reasons.join)
      assert_equal ["synchronous_standby_names is empty"], Stores::Durability.postgres(POSTGRES).reasons
    end

    def test_mysql_verdicts_under_either_semi_sync_spelling
      { "master" => "wait_no_slave", "source" => "wait_no_replica" }.each do |word, wait_no_replica|
        waits = "rpl_semi_sync_#{word}_#{wait_no_replica}"
        never = MYSQL.merge("rpl_semi_sync_#{word}_enabled" => "ON", "rpl_semi_sync_#{word}_status" => "ON",
                            "rpl_semi_sync_#{word}_wait_point" => "AFTER_SYNC", waits => "ON",
                            "rpl_semi_sync_#{word}_timeout" => Stores::Durability::SEMI_SYNC_NEVER_MS.to_s)
        durability = Stores::Durability.mysql(never)

        assert_equal :survives_failover, durability.verdict, word
        assert_predicate durability, :strict?
        assert_equal ["semi-synchronous replication is enabled (wait point AFTER_SYNC, timeout 4294967295 ms)"],
                     durability.reasons
        falls_back = Stores::Durability.mysql(never.merge("rpl_semi_sync_#{word}_timeout" => "10000"))
        assert_equal :survives_crash, falls_back.verdict, word
        assert_includes falls_back.reasons, "semi-sync falls back to async after 10000 ms (rpl_semi_sync_master_timeout) " \
                                            "without a replica's answer, and tells no client: acknowledged grants can be lost"
        fallen_back = Stores::Durability.mysql(never.merge("rpl_semi_sync_#{word}_status" => "OFF"))
        assert_equal :survives_crash, fallen_back.verdict, word
        assert_match(/has fallen back to asynchronous/, fallen_back.reasons.join)
        assert_equal :survives_crash, Stores::Durability.mysql(never.merge(waits => "OFF")).verdict
        after_commit = Stores::Durability.mysql(never.merge("rpl_semi_sync_#{word}_wait_point" => "AFTER_COMMIT"))
        assert_equal :survives_crash, after_commit.verdict, word
        assert_includes after_commit.reasons, "wait point AFTER_COMMIT: other sessions read a grant before a replica has it"
        past = Stores::Durability.mysql(never.merge("rpl_semi_sync_#{word}_no_tx" => "3"))
        assert_equal :survives_failover, past.verdict, "a past fallback is said, not judged"
        assert_match(/3 commits were acknowledged without a replica's answer/, past.reasons.last)
      end
      assert_equal ["semi-synchronous replication is off"], Stores::Durability.mysql(MYSQL).reasons
      assert_equal :survives_crash, Stores::Durability.mysql(MYSQL).verdict
      assert_equal :loses_on_crash, Stores::Durability.mysql(MYSQL.merge("innodb_flush_log_at_trx_commit" => "2")).verdict
      assert_equal :loses_on_crash, Stores::Durability.mysql(MYSQL.merge("sync_binlog" => "0")).verdict
      assert_equal :survives_crash, Stores::Durability.mysql(MYSQL.merge("sync_binlog" => "0", "log_bin" => "OFF")).verdict
      assert_equal :read_only, Stores::Durability.mysql(MYSQL.merge("read_only" => "ON")).verdict
    end

    def test_sqlite_verdicts
      assert_equal :survives_crash, Stores::Durability.sqlite("journal_mode" => "wal", "synchronous" => "2").verdict
      assert_equal :survives_crash, Stores::Durability.sqlite("journal_mode" => "delete", "synchronous" => "1").verdict
      assert_equal :loses_on_crash, Stores::Durability.sqlite("journal_mode" => "wal", "synchronous" => "1").verdict
      assert_equal :loses_on_crash, Stores::Durability.sqlite("journal_mode" => "delete", "synchronous" => "0").verdict
    end

    def test_a_durability_is_a_frozen_value_that_says_what_it_means
      durability = Stores::Durability.postgres(POSTGRES)

      assert_predicate durability, :frozen?
      assert_predicate durability.settings, :frozen?
      refute_predicate durability, :survives_failover?
      assert_match(/\APostgreSQL: survives_crash \(.*failover to an asynchronous replica.*\)\z/, durability.to_s)
    end

    def test_the_sqlite_store_reads_its_own_connections_pragmas
      Dir.mktmpdir do |dir|
        durability = Stores::SQLite.new(File.join(dir, "leases.sqlite3")).durability

        assert_equal({ "journal_mode" => "wal", "synchronous" => "2" }, durability.settings)
        assert_equal :survives_crash, durability.verdict
      end
    end

    def test_the_postgres_store_reads_the_server_and_its_own_session
      connection = PostgresServer.connect
      store = Stores::Postgres.new(connection)
      durability = store.durability

      assert_equal :survives_crash, durability.verdict
      assert_equal "f", durability.settings.fetch("in_recovery")
      assert_operator Integer(durability.settings.fetch("timeline"), 10), :>=, 1
      connection.exec("SET synchronous_commit = off")
      assert_equal :loses_on_crash, store.durability.verdict, "the session's own setting is what its commits get"
    ensure
      connection&.close
    end

    def test_the_memory_store_keeps_nothing
      assert_equal :in_memory, Stores::Memory.new.durability.verdict
    end
  end
end
