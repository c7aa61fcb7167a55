# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      # The fast path's statements, prepared once per server session (marked with its backend pid: a new
      # backend, or DISCARD ALL, prepares again), SET LOCAL timeouts in the same implicit transaction.
      class PreparedStatements
        # Looked up by identity: hashing a statement's text on every call costs more.
        UNLABELLED = [READ_SQL, CLOCK_SQL, CAS_SQL, CAS_UNLESS_LOCKED_SQL, CREATE_SQL, CAS_NOTIFY_SQL].freeze
        LABELLED = LABELLED_SQL.keys.freeze
        NAMES = (UNLABELLED + LABELLED)
                .to_h { |sql| [sql, "lease_machines_#{Zlib.crc32(sql).to_s(16)}"] }.compare_by_identity.freeze
        SESSIONS = ObjectSpace::WeakMap.new

        def initialize(prepared, lock_timeout_ms, statement_timeout_ms, failures, labelled:)
          @prepared = prepared
          @labelled = labelled
          @lock_timeout_ms = lock_timeout_ms
          @statement_timeout_ms = statement_timeout_ms
          @failures = failures
          @settings = [false, true].to_h { |bounded| [bounded, settings(bounded)] }.freeze
        end

        # Every value read as a String, whatever type map the owner installed (ActiveRecord installs one).
        AS_TEXT = PG::TypeMapAllStrings.new.freeze

        def run(session, sql, params, bounded:)
          conn = session.connection
          fresh = @prepared && ready(conn)
          settings = @settings.fetch(bounded)
          result = if settings
                     conn.exec("#{settings}#{inline(conn, sql, params)}")
                   elsif @prepared
                     conn.exec_prepared(NAMES.fetch(sql), params)
                   else
                     conn.exec_params(sql, params)
                   end
          result.type_map = AS_TEXT
          result
        rescue PG::InvalidSqlStatementName => e
          if fresh || !session.idle?
            raise @failures.problem("#{@failures.summary(e)}: the connection lost this store's prepared statements " \
                                    "again right after preparing them (a pooler in transaction mode?); use " \
                                    "prepared_statements: false")
          end

          SESSIONS[conn] = 0 # forgotten: prepare them again
          retry
        rescue PG::DuplicatePstatement => e
          # Found missing, then present when prepared: the two statements reached different server sessions.
          raise @failures.problem("#{@failures.summary(e)}: this store's prepared statements were found missing and " \
                                  "then present on the next statement (a pooler in transaction mode?); use " \
                                  "prepared_statements: false")
        end

        private

        def settings(bounded)
          sets = +""
          sets << "SET LOCAL lock_timeout = #{@lock_timeout_ms}; " if bounded && @lock_timeout_ms
          sets << "SET LOCAL statement_timeout = #{@statement_timeout_ms}; " if @statement_timeout_ms
          sets.freeze unless sets.empty?
        end

        # Prepares the statements the session lacks; whether it had to look.
        def ready(conn)
          pid = conn.backend_pid
          return false if SESSIONS[conn] == pid

          present = conn.exec("SELECT name FROM pg_prepared_statements WHERE name LIKE 'lease\\_machines\\_%'")
                        .column_values(0)
          (@labelled.call ? NAMES.keys : UNLABELLED).each do |sql|
            name = NAMES.fetch(sql)
            prepare(conn, name, sql) unless present.include?(name)
          end
          SESSIONS[conn] = pid
          true
        end

        # Preparing waits for a table lock: under statement_timeout it is SQL PREPARE, bounded too.
        def prepare(conn, name, sql)
          return conn.prepare(name, sql) unless @statement_timeout_ms

          conn.exec("SET LOCAL statement_timeout = #{@statement_timeout_ms}; PREPARE #{name} AS #{sql}")
        end

        # Parameters as literals: the name and label quoted by libpq, decimals this store made.
        def inline(conn, sql, params)
          label_at = LABELLED_SQL.key?(sql) ? params.size - 1 : nil
          literals = params.each_with_index.map do |value, index|
            if value.nil? then "NULL"
            elsif index.zero? || index == label_at then conn.escape_literal(value)
            elsif value.match?(/\A[0-9]+\z/) then value
            else
              raise Failures.internal("parameter #{index + 1} is not a decimal: #{value.inspect}")
            end
          end
          return "EXECUTE #{NAMES.fetch(sql)}#{"(#{literals.join(', ')})" unless literals.empty?}" if @prepared

          sql.gsub(/\$(\d+)/) { literals.fetch(Integer(Regexp.last_match(1), 10) - 1) }
        end
      end
      private_constant :PreparedStatements
    end
  end
end
