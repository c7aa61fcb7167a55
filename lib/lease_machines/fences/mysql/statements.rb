# frozen_string_literal: true

module LeaseMachines
  module Fences
    class MySQL < Table
      # The SQL of a MySQL fence (the table:
      # db/mysql/002_create_lease_machines_fences.sql). Values are written
      # into the statements: the resource as a hex literal (exact bytes,
      # nothing to escape, whatever the connection's character set), the
      # token as the digits of a checked Integer. Neither mysql2 nor
      # ActiveRecord's mysql2 adapter (without prepared statements, its
      # default) binds parameters.
      module Statements
        # The database clock in ns since the Unix epoch (the statement's
        # start, in UTC).
        CLOCK_NS = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000)"
        SAVEPOINT = "lease_machines_fence"
        # A shared-lock read (MySQL 8 also spells it FOR SHARE; MariaDB only this way).
        LOCKING = " LOCK IN SHARE MODE"
        ENGINE_SQL = "SELECT ENGINE FROM information_schema.TABLES " \
                     "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '#{TABLE}'".freeze

        class << self
          # Raises the mark of `resource` to `token`, running each statement
          # with the block (sql -> rows changed): the UPDATE; when it changed
          # nothing, the first row (INSERT IGNORE); when that found a row
          # another guard had created, the UPDATE again. @return [Integer] 1
          #   when the token was admitted, else 0
          def mark(mode, resource, token)
            raising = raise_sql(mode, resource, token)
            return 1 if yield(raising) == 1
            return 1 if yield(create_sql(mode, resource, token)) == 1

            yield(raising) == 1 ? 1 : 0
          end

          # `locking`: a locking read (the newest committed row, as the mark's
          # UPDATE saw it, not the transaction's REPEATABLE READ snapshot),
          # for the error of a refused mark.
          def highest_sql(resource, locking: false)
            "SELECT highest FROM #{TABLE} WHERE resource = #{literal(resource)}#{LOCKING if locking}"
          end

          # The store's row (last_issued, lease_token, lease_expires_at_ns)
          # and the database clock in ns.
          def store_row_sql(resource, locking: false)
            "SELECT last_issued, lease_token, lease_expires_at_ns, #{CLOCK_NS} FROM #{STORE_TABLE} " \
              "WHERE name = #{literal(resource)}#{LOCKING if locking}"
          end

          private

          def literal(resource)
            "X'#{resource.unpack1('H*')}'"
          end

          def digits(token)
            Integer(token).to_s
          end

          def raise_sql(mode, resource, token)
            t = digits(token)
            "UPDATE #{TABLE} SET admitted = admitted + 1, highest = #{t} WHERE resource = #{literal(resource)} " \
              "AND (highest IS NULL OR highest <= #{t})#{" AND EXISTS (#{store_sql(mode, resource, t)})" if mode != :any}"
          end

          def create_sql(mode, resource, token)
            t = digits(token)
            insert = "INSERT IGNORE INTO #{TABLE} (resource, highest, admitted)"
            return "#{insert} VALUES (#{literal(resource)}, #{t}, 1)" if mode == :any

            "#{insert} SELECT #{literal(resource)}, #{t}, 1 FROM (#{store_sql(mode, resource, t)}) AS issued"
          end

          # The store's row of `resource` when it issued the token (`digits`;
          # and, :live, holds it in a lease that ends after the database clock).
          def store_sql(mode, resource, digits)
            sql = "SELECT 1 FROM #{STORE_TABLE} AS store WHERE store.name = #{literal(resource)} " \
                  "AND store.last_issued >= #{digits}"
            sql += " AND store.lease_token = #{digits} AND store.lease_expires_at_ns > #{CLOCK_NS}" if mode == :live
            sql
          end
        end
      end
    end
  end
end
