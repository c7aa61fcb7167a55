# frozen_string_literal: true

module LeaseMachines
  module Stores
    # What a store's database promises about a grant it acknowledged ({Store#durability}), read from the
    # server's settings when asked, never trusted for a decision (docs/STORES.md, "Durability and failover").
    class Durability
      # The verdicts, from the strongest promise to the weakest.
      VERDICTS = {
        survives_failover: "an acknowledged grant is on a synchronous standby too: it survives the loss of " \
                           "the primary and the promotion of that standby",
        survives_crash: "an acknowledged grant is on disk: it survives a crash of the database, but a failover " \
                        "to an asynchronous replica (or a restore from a backup) can lose it and issue its " \
                        "token again",
        loses_on_crash: "even a crash or a power loss can lose an acknowledged grant, and its token is " \
                        "issued again",
        read_only: "the server is a replica (read-only): decisions fail until it is promoted",
        in_memory: "grants live in this process only: nothing survives it"
      }.freeze

      STANDBY_WAITS = %w[on remote_write remote_apply].freeze
      private_constant :STANDBY_WAITS

      attr_reader :engine, :verdict, :settings, :reasons

      def initialize(engine:, verdict:, settings:, reasons:)
        @engine = engine
        @verdict = verdict
        @settings = settings.to_h { |key, value| [key.to_s.freeze, value.to_s.freeze] }.freeze
        @reasons = reasons.map { |reason| reason.dup.freeze }.freeze
        freeze
      end

      # PostgreSQL's settings as read by {Postgres#durability} (in_recovery "t"/"f", sync_standbys a count).
      def self.postgres(settings)
        commit = settings.fetch("synchronous_commit")
        standbys = settings.fetch("synchronous_standby_names")
        verdict, reasons =
          if settings.fetch("in_recovery") == "t"
            [:read_only, ["pg_is_in_recovery() is true"]]
          elsif settings.fetch("fsync") != "on" || commit == "off"
            [:loses_on_crash, ["fsync = #{settings.fetch('fsync')}, synchronous_commit = #{commit}"]]
          elsif !standbys.empty? && STANDBY_WAITS.include?(commit)
            [:survives_failover, postgres_standby_reasons(commit, standbys, settings.fetch("sync_standbys"))]
          else
            [:survives_crash, [standbys.empty? ? "synchronous_standby_names is empty" : "synchronous_commit = local"]]
          end
        new(engine: "PostgreSQL", verdict: verdict, settings: settings, reasons: reasons)
      end

      def self.postgres_standby_reasons(commit, standbys, connected)
        reasons = ["synchronous_commit = #{commit} waits for #{standbys}",
                   "a COMMIT whose wait for the standby is cancelled raises OutcomeUnknownError"]
        reasons << "remote_write: a crash of both servers at once can lose it" if commit == "remote_write"
        reasons << "no synchronous standby is connected now: commits wait until one is" if connected == "0"
        reasons
      end
      private_class_method :postgres_standby_reasons

      # The longest rpl_semi_sync_*_timeout MySQL accepts (~49.7 days): such a semi-sync never falls back.
      SEMI_SYNC_NEVER_MS = 4_294_967_295

      # MySQL's and MariaDB's variables and status as read by {MySQL#durability}, semi-sync under either spelling.
      def self.mysql(settings)
        flush = settings.fetch("innodb_flush_log_at_trx_commit")
        verdict, reasons =
          if settings["read_only"] == "ON"
            [:read_only, ["read_only = ON"]]
          elsif flush != "1" || (settings["log_bin"] == "ON" && settings["sync_binlog"] != "1")
            [:loses_on_crash, ["innodb_flush_log_at_trx_commit = #{flush}, log_bin = #{settings['log_bin']}, " \
                               "sync_binlog = #{settings['sync_binlog']}"]]
          else
            mysql_semi_sync(settings)
          end
        new(engine: "MySQL", verdict: verdict, settings: settings, reasons: reasons)
      end

      # Semi-sync survives a failover only where it never acknowledges a commit no replica has: AFTER_SYNC,
      # waiting with no replica connected, for ever (past its timeout it goes async silently: issue #26).
      def self.mysql_semi_sync(settings)
        semi = ->(name) { settings["rpl_semi_sync_source_#{name}"] || settings["rpl_semi_sync_master_#{name}"] }
        return [:survives_crash, ["semi-synchronous replication is off"]] unless semi.call("enabled") == "ON"

        enabled = "semi-synchronous replication is enabled (wait point #{semi.call('wait_point')}, " \
                  "timeout #{semi.call('timeout')} ms)"
        gaps = mysql_semi_sync_gaps(semi, settings["rpl_semi_sync_source_wait_no_replica"] ||
                                          settings["rpl_semi_sync_master_wait_no_slave"])
        # What happened before, not what is promised now: said, not judged.
        unacknowledged = semi.call("no_tx").to_s
        past = if unacknowledged.match?(/\A[1-9]\d*\z/)
                 ["#{unacknowledged} commits were acknowledged without a replica's answer since the server " \
                  "started (Rpl_semi_sync_master_no_tx)"]
               end
        [gaps.empty? ? :survives_failover : :survives_crash, [enabled, *gaps, *past]]
      end
      private_class_method :mysql_semi_sync

      def self.mysql_semi_sync_gaps(semi, wait_no_replica)
        timeout = semi.call("timeout").to_s
        {
          "semi-synchronous replication has fallen back to asynchronous (its status is OFF): grants acknowledged " \
          "now are on no replica" => semi.call("status") != "ON",
          "semi-sync falls back to async after #{timeout} ms (rpl_semi_sync_master_timeout) without a replica's " \
          "answer, and tells no client: acknowledged grants can be lost" =>
            !(timeout.match?(/\A\d+\z/) && Integer(timeout, 10) >= SEMI_SYNC_NEVER_MS),
          "rpl_semi_sync_master_wait_no_slave = OFF: with no replica connected it does not wait" => wait_no_replica != "ON",
          "wait point #{semi.call('wait_point')}: other sessions read a grant before a replica has it" =>
            semi.call("wait_point") != "AFTER_SYNC"
        }.select { |_gap, open| open }.keys
      end
      private_class_method :mysql_semi_sync_gaps

      # SQLite's pragmas as read by {SQLite#durability} (journal_mode, synchronous 0-3).
      def self.sqlite(settings)
        synchronous = settings.fetch("synchronous")
        verdict, reason =
          if synchronous == "0"
            [:loses_on_crash, "synchronous = OFF"]
          elsif synchronous == "1" && settings.fetch("journal_mode") == "wal"
            [:loses_on_crash, "synchronous = NORMAL in WAL mode: a power loss can lose the last commits"]
          else
            [:survives_crash, "synchronous = #{%w[OFF NORMAL FULL EXTRA].fetch(Integer(synchronous, 10), synchronous)}"]
          end
        new(engine: "SQLite", verdict: verdict, settings: settings, reasons: [reason])
      end

      def meaning = VERDICTS.fetch(verdict)
      def survives_failover? = verdict == :survives_failover

      # Whether `durability: :strict` decides on it: nothing acknowledged is lost in a failover (a SQLite
      # file has no replica, so surviving a crash is enough).
      def strict? = survives_failover? || (engine == "SQLite" && verdict == :survives_crash)
      def to_s = "#{engine}: #{verdict} (#{meaning}; #{reasons.join('; ')})"
      def inspect = "#<#{self.class.name} #{engine} #{verdict} #{settings.inspect}>"
    end
  end
end
