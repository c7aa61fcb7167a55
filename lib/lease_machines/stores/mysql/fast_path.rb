# frozen_string_literal: true

require_relative "../fast_path"

module LeaseMachines
  module Stores
    class MySQL < Store
      # In autocommit mode each statement has its own snapshot, so REPEATABLE READ shows the newest row.
      class FastPath < Stores::FastPath
        private

        def commit(session, name, _request, before, decided, label) # rubocop:disable Metrics/ParameterLists -- FastPath's
          decision, after = decided
          write(session, name, before, after, label) ? decision : nil
        end

        # With autocommit off it would neither see other decisions (its snapshot stays) nor commit: refused.
        def read(session, name)
          values = session.query(SQL.read(name)).first || session.query(NEW_READ_SQL).first
          return values if values.fetch(6) == "1"

          raise Failures.in_transaction("MySQL", " (autocommit is off), so give the store a connection in " \
                                                 "autocommit mode")
        rescue Mysql2::Error => e
          session.recover unless Errors.answered?(e)
          raise @failures.failed(e, Failures::NOT_WRITTEN)
        end

        def write(session, name, before, after, label)
          committed(session) do
            session.query(before ? SQL.compare_and_set(name, before, after, label) : SQL.create(name, after, label))
            session.affected_rows == 1
          end
        end

        def lost_race?(session, error) = error.is_a?(Mysql2::Error) && Errors.deadlock?(error) && !session.connection.closed?
      end
      private_constant :FastPath
    end
  end
end
