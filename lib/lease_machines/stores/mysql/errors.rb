# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # What a Mysql2::Error means. The client library numbers its own errors
      # (the connection failed, was lost, timed out) 2000..2999; the server's
      # answers are numbered below 2000 or from 3000 up. The mysql2 gem raises
      # its own errors (a closed or busy client) with number 0.
      module Errors
        DEADLOCK = 1213 # ER_LOCK_DEADLOCK: the server rolled the transaction back
        LOCK_WAIT_TIMEOUT = 1205 # ER_LOCK_WAIT_TIMEOUT: innodb_lock_wait_timeout ran out
        CLIENT = (2000..2999)

        class << self
          # Whether the server answered `error` (the connection is still there).
          # (mysql2 raises a lock wait timeout, which the server answered, and
          # its own read_timeout, which it did not, as the same TimeoutError:
          # the number tells them apart.)
          def answered?(error)
            error.is_a?(Mysql2::Error) && !error.error_number.zero? && !CLIENT.cover?(error.error_number)
          end

          def deadlock?(error)
            error.is_a?(Mysql2::Error) && error.error_number == DEADLOCK
          end

          # A message's summary: the server's text and its error number.
          def summary(error)
            number = error.error_number
            number.zero? ? error.message : "#{error.message} (error #{number})"
          end
        end
      end
      private_constant :Errors
    end
  end
end
