# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # What a Mysql2::Error means: the client library's are 2000..2999, mysql2's own 0, the server's the rest.
      module Errors
        DEADLOCK = 1213 # ER_LOCK_DEADLOCK: the server rolled the transaction back
        LOCK_WAIT_TIMEOUT = 1205 # ER_LOCK_WAIT_TIMEOUT: innodb_lock_wait_timeout ran out
        CLIENT = (2000..2999)

        class << self
          # mysql2 raises a lock wait timeout and its own read_timeout as one TimeoutError: the number tells.
          def answered?(error) = error.is_a?(Mysql2::Error) && !error.error_number.zero? && !CLIENT.cover?(error.error_number)
          def deadlock?(error) = error.is_a?(Mysql2::Error) && error.error_number == DEADLOCK

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
