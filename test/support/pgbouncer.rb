# frozen_string_literal: true

require "open3"
require "pg"
require "uri"
require_relative "../stores/store_helper"

module LeaseMachines
  # A real PgBouncer (script/pgbouncer) in transaction mode in front of the
  # test PostgreSQL: a client holds a server connection for one transaction
  # only. Started by the first test that needs it (when nothing answers on its
  # port yet) and stopped when the suite ends.
  module PgBouncer
    SCRIPT = File.expand_path("../../script/pgbouncer", __dir__)
    SCHEMA = "lease_machines_pooled" # the schema the pooled databases work in (script/pgbouncer)

    class << self
      # The pooled URL (database `name`), the pooler started on first use.
      def url(name = SCHEMA)
        "#{base_url.sub(%r{/[^/]*\z}, '')}/#{name}"
      end

      # A direct connection (no pooler) to the pooled schema.
      def direct
        PG.connect("#{StoreTestHelper::PostgresServer.base_url}?options=-c%20search_path%3D#{SCHEMA}")
      end

      # A connection to the pooler's admin console (SHOW, SET).
      def console
        PG.connect(url("pgbouncer"))
      end

      # One setting of the running pooler (SHOW CONFIG), nil when this
      # PgBouncer has no such setting.
      def setting(key)
        conn = console
        conn.exec("SHOW CONFIG").find { |row| row["key"] == key }&.fetch("value")
      ensure
        conn&.close
      end

      private

      def base_url
        @base_url ||= start
      end

      # Starts the pooler in front of the server of DATABASE_URL and empties the
      # pooled schema; the suite's end stops the pooler if this process started it.
      def start
        server = URI(StoreTestHelper::PostgresServer.base_url)
        env = { "LEASE_MACHINES_PG_PORT" => server.port.to_s }
        pooled = run(env, "url")
        started = !answers?(pooled)
        run(env, "start") if started
        owner = Process.pid
        Minitest.after_run { run(env, "stop") if started && Process.pid == owner }
        reset_schema
        pooled
      end

      def answers?(url)
        PG.connect(url, connect_timeout: 2).close
        true
      rescue PG::ConnectionBad
        false
      end

      def run(env, command)
        out, status = Open3.capture2e(env, SCRIPT, command)
        raise "script/pgbouncer #{command} failed:\n#{out}" unless status.success?

        out.lines.last.to_s.strip
      end

      def reset_schema
        conn = PG.connect(StoreTestHelper::PostgresServer.base_url)
        conn.exec("SET client_min_messages = warning")
        conn.exec("DROP SCHEMA IF EXISTS #{SCHEMA} CASCADE")
        conn.exec("CREATE SCHEMA #{SCHEMA}")
        conn.close
        admin = direct
        Stores::Postgres.new(admin).setup!
        admin.close
      end
    end
  end
end
