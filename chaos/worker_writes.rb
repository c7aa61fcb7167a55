# frozen_string_literal: true

module Chaos
  # A worker's writes to the protected data. Resources of even index keep
  # their data in the store's own database, behind a bound, strict fence
  # (`store: true, strict: true`); the others in the other engine's
  # database, behind a plain fence (every resource's, with FAILOVER=on). A
  # guard shows the worker's owner (its pid, which it holds leases as) unless
  # OWNERS=off. With FENCING=off every write is a plain
  # insert in a transaction of its own, with the token recorded all the same.
  module WorkerWrites
    private

    def open_writers
      postgres = @config.fetch("engine") == "postgres"
      fenced = @config.fetch("fencing")
      @same = writer(postgres ? :postgres : :sqlite, fenced, bound: true)
      @other = writer(postgres ? :sqlite : :postgres, fenced, bound: false)
    end

    def writer(kind, fenced, bound:)
      path = bound ? @config.fetch("sqlite_path") : @config.fetch("data_sqlite_path")
      url = @config.fetch("writer_url")
      if kind == :postgres
        fenced ? LeaseMachines::Fences::Postgres.new(url, store: bound, strict: bound) : PlainPostgres.new(url)
      else
        fenced ? LeaseMachines::Fences::SQLite.new(path, store: bound, strict: bound) : PlainSQLite.new(path)
      end
    end

    # @return [Boolean] whether to go on writing under this lease
    def write(held, index)
      bound = @config.fetch("same_database").fetch(index)
      token = held.token
      write = next_write(held.resource, token)
      writer = bound ? @same : @other
      clock_ns = EventLog.now_ns
      writer.guard(held.resource, token, **shown_owner) do |conn|
        maybe_stop_in_transaction(held.resource, token)
        insert(conn, write, writer.is_a?(PlainSQLite) ? EventLog.now_ns : clock_ns, bound)
      end
      @log.log(:write, resource: held.resource, token: token, sequence: @sequence, bound: bound)
      true
    rescue LeaseMachines::FencedError => e
      @log.log(:refused, resource: held.resource, token: token, sequence: @sequence, error: e.class.name,
                         highest: e.highest)
      held.fenced!
      false
    rescue LeaseMachines::StoreError, PG::Error, SQLite3::Exception, IOError, SystemCallError => e
      @log.log(:write_error, resource: held.resource, token: token, sequence: @sequence, error: e.class.name,
                             message: e.message[0, 200])
      true
    end

    # The row a write inserts (the protected data's columns), numbered.
    def next_write(resource, token)
      @sequence += 1
      { resource: resource, token: token, worker: @id, pid: Process.pid, sequence: @sequence,
        fenced: @config.fetch("fencing") }
    end

    # The guard's owner keyword: the holder's (its pid), or none with OWNERS=off.
    def shown_owner
      @config.fetch("owners") ? { owner: Process.pid } : {}
    end

    # The row, on the guard's connection. On SQLite its time is the
    # transaction's start: read before the guard (which reads its own clock
    # after it), or inside a plain BEGIN IMMEDIATE.
    def insert(conn, write, clock_ns, bound)
      if conn.is_a?(SQLite3::Database)
        ProtectedData.insert_sqlite(conn, write, clock_ns, with_store: bound)
      else
        ProtectedData.insert_postgres(conn, write, with_store: bound)
      end
    end

    # FENCING=off on PostgreSQL: the same write in a plain transaction,
    # reconnecting after a failure as the fence would.
    class PlainPostgres
      def initialize(url)
        @url = url
        @conn = nil
      end

      def guard(_resource, _token, owner: nil, &block) # rubocop:disable Lint/UnusedMethodArgument
        @conn = nil if @conn&.finished? || @conn&.status == PG::CONNECTION_BAD
        @conn ||= PG.connect(@url)
        @conn.transaction(&block)
      rescue PG::ConnectionBad, PG::UnableToSend
        @conn&.close unless @conn&.finished?
        @conn = nil
        raise
      end
    end

    # FENCING=off on SQLite: the same write in a plain BEGIN IMMEDIATE.
    class PlainSQLite
      def initialize(path)
        @db = SQLite3::Database.new(path)
        @db.busy_timeout = 5000
      end

      def guard(_resource, _token, owner: nil, &block) # rubocop:disable Lint/UnusedMethodArgument
        @db.transaction(:immediate) { block.call(@db) }
      end
    end
  end
end
