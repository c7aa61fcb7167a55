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
        DEADLOCK = 1213 # ER_LOCK_DEADLOCK: the server rolled the whole transaction back
        # How many times a guard's own transaction, rolled back by a deadlock
        # during its mark (before the block ran), is begun and marked again.
        DEADLOCK_ATTEMPTS = 5
        RESTART = ["ROLLBACK", "START TRANSACTION"].freeze
        ENGINE_SQL = "SELECT ENGINE FROM information_schema.TABLES " \
                     "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '#{TABLE}'".freeze
        # Whether the table has the owner column (a table made before it has
        # not), and the DDL that adds it; a concurrent setup! that added it
        # first makes the ALTER fail with DUPLICATE_COLUMN, which is success.
        HAS_OWNER_SQL = "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() " \
                        "AND TABLE_NAME = '#{TABLE}' AND COLUMN_NAME = '#{OWNER_COLUMN}'".freeze
        ADD_OWNER_SQL = "ALTER TABLE #{TABLE} ADD COLUMN #{OWNER_COLUMN} DECIMAL(20,0) NULL, ADD CONSTRAINT " \
                        "lease_machines_fences_lease_owner_is_an_owner CHECK (#{OWNER_COLUMN} BETWEEN 0 AND " \
                        "18446744073709551615)".freeze
        DUPLICATE_COLUMN = 1060 # ER_DUP_FIELDNAME

        class << self
          # Raises the mark of `resource` to `token`, running each statement
          # with the block (sql -> rows changed, as the client counts them).
          #
          # The first statement is an INSERT ... ON DUPLICATE KEY UPDATE:
          # it inserts the resource's first row (the token admitted), or,
          # when the row exists, takes its exclusive row lock and raises the
          # mark (and the `admitted` counter) when the mark is NULL or at most
          # the token. It counts 1 for an insert and 2 for a changed row; an
          # unchanged row (a refusal) counts 0, or 1 under CLIENT_FOUND_ROWS
          # (which mysql2 and ActiveRecord set). So 2 is admitted and 0 is
          # refused; only a 1 asks a second statement, which changes the row
          # when it holds this very token (then it was the insert: a refused
          # row holds a greater one).
          #
          # Why not the UPDATE first, and the INSERT only when it found no
          # row: an UPDATE (any locking read) of a missing row takes a gap
          # lock under REPEATABLE READ, gap locks do not exclude each other,
          # and every guard's INSERT then waits for the others' gap locks: a
          # deadlock, which rolls back the guard's whole transaction (the
          # caller's too, inside one), whenever two guards make the first
          # write of a resource at once. Nor INSERT IGNORE first: it takes a
          # shared lock on a row it finds, and two guards holding it both wait
          # to upgrade it for their UPDATE. An INSERT that finds the row takes
          # it exclusively (ON DUPLICATE KEY UPDATE), so guards of one
          # resource, new or not, queue on one row lock and never hold a lock
          # another is waiting for.
          #
          # One case still deadlocks: the guard that inserted the row rolls
          # back (its block raised, or its connection failed) while others
          # wait for the row; InnoDB then rolls back one of them, whole. With
          # `restart` (the guard's own transaction, begun just before: nothing
          # of the caller's has run, nothing is lost), the mark begins that
          # transaction again and runs once more, up to DEADLOCK_ATTEMPTS
          # times in all. Inside the caller's transaction it cannot (the server
          # rolled back the caller's work too): the deadlock is raised.
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

          # Whether `error` (a driver's, or ActiveRecord's around it) is
          # InnoDB's deadlock, after which nothing of the transaction is left.
          def deadlock?(error)
            [error, error.cause].any? { |e| e.is_a?(Mysql2::Error) && e.error_number == DEADLOCK }
          end

          # `locking`: a locking read (the newest committed row, as the mark's
          # statement saw it, not the transaction's REPEATABLE READ snapshot),
          # for the error of a refused mark.
          def highest_sql(resource, locking: false)
            "SELECT highest FROM #{TABLE} WHERE resource = #{literal(resource)}#{LOCKING if locking}"
          end

          # The owner recorded with the mark, read as {highest_sql} reads it.
          def owner_sql(resource, locking: false)
            "SELECT #{OWNER_COLUMN} FROM #{TABLE} WHERE resource = #{literal(resource)}#{LOCKING if locking}"
          end

          # The store's row (last_issued, lease_token, lease_expires_at_ns)
          # and the database clock in ns.
          def store_row_sql(resource, locking: false)
            "SELECT last_issued, lease_token, lease_expires_at_ns, #{CLOCK_NS}, lease_owner FROM #{STORE_TABLE} " \
              "WHERE name = #{literal(resource)}#{LOCKING if locking}"
          end

          private

          def mark_once(mode, resource, token, owner)
            case yield(mark_sql(mode, resource, token, owner))
            when 2 then 1
            when 1 then yield(inserted_sql(resource, token, owner)) == 1 ? 1 : 0
            else 0
            end
          end

          def literal(resource)
            "X'#{resource.unpack1('H*')}'"
          end

          def digits(token)
            Integer(token).to_s
          end

          # The resource's first row, or its mark raised (see {mark}). A
          # bound fence's row comes from a SELECT of the store's row: when
          # the store does not admit the token, it gives no row, so nothing is
          # inserted or updated, no fence row is locked, and the count is 0.
          #
          # The owner: a greater token records its owner (or NULL), an equal
          # one keeps the recorded owner (or records its own when none was);
          # an equal token whose owner differs from the recorded one is
          # refused (reissued). MySQL assigns left to right, each assignment
          # seeing the ones before: lease_owner is set before highest.
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

          # After a mark that counted 1: changes the row (1) when it holds
          # the token and the owner, that is when the mark inserted it (with
          # `admitted` 0, which this makes 1); a row refused as reissued holds
          # the token with another owner.
          def inserted_sql(resource, token, owner)
            o = owner.nil? ? "NULL" : digits(owner)
            "UPDATE #{TABLE} SET admitted = admitted + 1 WHERE resource = #{literal(resource)} " \
              "AND highest = #{digits(token)} AND #{OWNER_COLUMN} <=> #{o}"
          end

          # The store's row of `resource` when it issued the token (`digits`;
          # and, :live, holds it in a lease that ends after the database clock,
          # held by the guard's owner `owner` when it shows one: SQL text).
          def store_sql(mode, resource, digits, owner)
            sql = "SELECT 1 FROM #{STORE_TABLE} AS store WHERE store.name = #{literal(resource)} " \
                  "AND store.last_issued >= #{digits}"
            return sql unless mode == :live

            sql += " AND store.lease_token = #{digits} AND store.lease_expires_at_ns > #{CLOCK_NS}"
            owner == "NULL" ? sql : "#{sql} AND store.lease_owner = #{owner}"
          end
        end
      end
    end
  end
end
