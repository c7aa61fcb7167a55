# frozen_string_literal: true

module LeaseMachinesDemo
  # The story's state in PostgreSQL (`bin/demo --store postgres://...`): the
  # lease store, the reports table and its fence in a schema of the demo's
  # own, created for the run and dropped after it.
  class PostgresBackend
    UPSERT = "INSERT INTO demo_reports (name, body, writer, token) VALUES ($1, $2, $3, $4) " \
             "ON CONFLICT (name) DO UPDATE SET body = excluded.body, writer = excluded.writer, token = excluded.token"

    def initialize(url)
      require "lease_machines/stores/postgres"
      require "lease_machines/fences/postgres"
      @base_url = url
      @schema = "lm_demo_#{Process.pid}"
      @url = "#{url}#{url.include?('?') ? '&' : '?'}options=-c%20search_path%3D#{@schema}"
    end

    def describe = "PostgreSQL, schema #{@schema} (dropped afterwards)"

    def prepare
      admin { |conn| conn.exec("CREATE SCHEMA #{@schema}") }
      store.tap(&:setup!).close
      fences.tap(&:setup!).close
      with_data do |conn|
        conn.exec("CREATE TABLE demo_reports (name text PRIMARY KEY, body text, writer int, token numeric(20,0))")
      end
    end

    def store = LeaseMachines::Stores::Postgres.new(@url)

    def fences = LeaseMachines::Fences::Postgres.new(@url)

    def write_on(conn, name, body, writer, token)
      conn.exec_params(UPSERT, [name, body, writer, token.to_s])
    end

    def plain_write(name, body, writer, token)
      with_data { |conn| write_on(conn, name, body, writer, token) }
    end

    def report(name)
      row = with_data do |conn|
        conn.exec_params("SELECT body, writer, token FROM demo_reports WHERE name = $1", [name]).values.first
      end
      row && [row[0], Integer(row[1], 10), Integer(row[2], 10)]
    end

    def cleanup
      admin { |conn| conn.exec("DROP SCHEMA IF EXISTS #{@schema} CASCADE") }
    end

    private

    def admin
      conn = PG.connect(@base_url)
      conn.exec("SET client_min_messages = warning")
      yield conn
    ensure
      conn&.close
    end

    def with_data
      conn = PG.connect(@url)
      yield conn
    ensure
      conn&.close
    end
  end
end
