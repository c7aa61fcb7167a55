# frozen_string_literal: true

require "mysql2"
require "lease_machines/fences"
require "lease_machines/stores/mysql"

module LeaseMachines
  module Fences
    # Fences in a MySQL or MariaDB database (InnoDB): one row per resource in
    # `lease_machines_fences`, in the connection's current database, marks as
    # DECIMAL(20,0). The connection: a Mysql2::Client, a URL (owned by the fence), a
    # pool (`with`), or ActiveRecord's mysql2 adapter.
    class MySQL < Table
      SCHEMA_SQL = Fences.schema_sql(:mysql)

      def initialize(connection, store: false, strict: false, signing_keys: nil)
        @admission = Admission.from(store: store, strict: strict)
        super(source(connection), signing_keys)
      end

      # The SQL of a MySQL fence. Values are written in (neither mysql2 nor the adapter
      # without prepared statements binds): the resource as a hex literal (exact bytes,
      # whatever the character set), the token as the digits of a checked Integer.
      module Statements
        # The database clock in ns (the statement's start, in UTC).
        CLOCK_NS = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000)"
        LOCKING = " LOCK IN SHARE MODE" # MySQL 8 also spells it FOR SHARE; MariaDB only this way
        DEADLOCK = 1213 # ER_LOCK_DEADLOCK: the server rolled the whole transaction back
        DEADLOCK_ATTEMPTS = 5
        RESTART = ["ROLLBACK", "START TRANSACTION"].freeze
        ENGINE_SQL = "SELECT ENGINE FROM information_schema.TABLES " \
                     "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '#{TABLE}'".freeze
        HAS_OWNER_SQL = "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() " \
                        "AND TABLE_NAME = '#{TABLE}' AND COLUMN_NAME = '#{OWNER_COLUMN}'".freeze
        ADD_OWNER_SQL = "ALTER TABLE #{TABLE} ADD COLUMN #{OWNER_COLUMN} DECIMAL(20,0) NULL, ADD CONSTRAINT " \
                        "lease_machines_fences_lease_owner_is_an_owner CHECK (#{OWNER_COLUMN} BETWEEN 0 AND " \
                        "18446744073709551615)".freeze
        READS = { highest: "SELECT highest FROM #{TABLE} WHERE resource",
                  owner: "SELECT #{OWNER_COLUMN} FROM #{TABLE} WHERE resource",
                  store_row: "SELECT last_issued, lease_token, lease_expires_at_ns, #{CLOCK_NS}, lease_owner FROM " \
                             "#{STORE_TABLE} WHERE name" }.freeze
        # A concurrent setup! added the column first: success.
        DUPLICATE_COLUMN = 1060 # ER_DUP_FIELDNAME

        class << self
          # Raises the mark, running each statement with the block (sql -> rows changed).
          #
          # INSERT ... ON DUPLICATE KEY UPDATE inserts the first row, or takes the row's
          # exclusive lock and raises the mark when it admits the token. It counts 1 for an
          # insert, 2 for a change, 0 for a refusal (1 under CLIENT_FOUND_ROWS, which mysql2
          # and ActiveRecord set): only a 1 asks a second statement (did it insert the row?).
          # Not UPDATE first: its gap lock on a missing row lets two first guards of a
          # resource deadlock on their INSERTs; nor INSERT IGNORE: its shared lock makes
          # two guards deadlock upgrading it. This way guards queue on one row lock.
          # Still, a guard that inserted the row and rolls back makes InnoDB roll back one
          # waiter whole: with `restart` (the guard's own transaction, nothing of the
          # caller's lost) it begins again, up to DEADLOCK_ATTEMPTS times in all.
          # @return [Integer] 1 when the token was admitted, else 0
          def mark(mode, resource, token, owner = nil, restart: false, &run)
            attempts = 1
            begin
              mark_once(mode, resource, token, owner, &run)
            rescue StandardError => e
              raise unless restart && deadlock?(e) && attempts < DEADLOCK_ATTEMPTS

              attempts += 1
              RESTART.each(&run)
              retry
            end
          end

          # Whether `error` (the driver's, or ActiveRecord's around it) is InnoDB's deadlock.
          def deadlock?(error) = [error, error.cause].any? { |e| e.is_a?(Mysql2::Error) && e.error_number == DEADLOCK }

          # The SQL of {Admission::Reads}' `kind`; `locking`: the newest committed row, as the
          # mark saw it, not the REPEATABLE READ snapshot (for a refusal's error).
          def read_sql(kind, resource, locking: false)
            "#{READS.fetch(kind)} = #{literal(resource)}#{LOCKING if locking}"
          end

          private

          def mark_once(mode, resource, token, owner)
            case yield(mark_sql(mode, resource, token, owner))
            when 2 then 1
            when 1 then yield(inserted_sql(resource, token, owner)) == 1 ? 1 : 0
            else 0
            end
          end

          def literal(resource) = "X'#{resource.unpack1('H*')}'"
          def digits(token) = Integer(token).to_s

          # A bound fence's row comes from a SELECT of the store's row: a token the store
          # does not admit gives no row, so nothing is written or locked, and the count is 0.
          # MySQL assigns left to right, each seeing the ones before: lease_owner before highest.
          def mark_sql(mode, resource, token, owner)
            t = digits(token)
            o = owner.nil? ? "NULL" : digits(owner)
            mark = "#{TABLE}.highest"
            recorded = "#{TABLE}.#{OWNER_COLUMN}"
            admits = "#{mark} IS NULL OR #{mark} < #{t} OR (#{mark} = #{t} AND (#{recorded} IS NULL OR " \
                     "#{o} IS NULL OR #{recorded} = #{o}))"
            row = if mode == :any
                    "VALUES (#{literal(resource)}, #{t}, 0, #{o})"
                  else
                    "SELECT #{literal(resource)}, #{t}, 0, #{o} FROM (#{store_sql(mode, resource, t, o)}) AS issued"
                  end
            "INSERT INTO #{TABLE} (resource, highest, admitted, #{OWNER_COLUMN}) #{row} ON DUPLICATE KEY UPDATE " \
              "admitted = IF(#{admits}, #{TABLE}.admitted + 1, #{TABLE}.admitted), " \
              "#{OWNER_COLUMN} = IF(#{admits}, IF(#{mark} = #{t}, COALESCE(#{recorded}, #{o}), #{o}), #{recorded}), " \
              "highest = IF(#{admits}, #{t}, #{mark})"
          end

          # After a count of 1: changes the row when it holds the token and the owner,
          # that is when the mark inserted it (`admitted` 0); a reissued refusal holds another owner.
          def inserted_sql(resource, token, owner)
            o = owner.nil? ? "NULL" : digits(owner)
            "UPDATE #{TABLE} SET admitted = admitted + 1 WHERE resource = #{literal(resource)} " \
              "AND highest = #{digits(token)} AND #{OWNER_COLUMN} <=> #{o}"
          end

          def store_sql(mode, resource, digits, owner)
            sql = "SELECT 1 FROM #{STORE_TABLE} AS store WHERE store.name = #{literal(resource)} " \
                  "AND store.last_issued >= #{digits}"
            return sql unless mode == :live

            sql += " AND store.lease_token = #{digits} AND store.lease_expires_at_ns > #{CLOCK_NS}"
            owner == "NULL" ? sql : "#{sql} AND store.lease_owner = #{owner}"
          end
        end
      end

      private

      def source(connection)
        server_source(connection, Stores::MySQL::Connections, "MySQL", DIALECT) do |driver, failures|
          Session.new(driver, failures, admission: @admission)
        end
      end

      def failures(label) = super(label, Mysql2::Error)

      def missing(error)
        message = error.message
        return :store_table if message.include?(".#{STORE_TABLE}' doesn't exist")
        return :owner_column if message.include?("'#{OWNER_COLUMN}'")

        :table if message.include?(".#{TABLE}' doesn't exist")
      end
    end
  end
end

require_relative "mysql/session"

module LeaseMachines
  module Fences
    class MySQL < Table
      # Its own ActiveRecord session class: the statements are built with their values.
      DIALECT = ActiveRecordSession::Dialect.new(engine: "MySQL", adapter: /mysql/i,
                                                 session: ActiveRecordMySQLSession).freeze
    end
  end
end
