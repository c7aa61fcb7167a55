# frozen_string_literal: true

# Every error the gem raises, declared here once. Loaded before the extension,
# which resolves StoreError when it loads. Where an error carries more than a
# message, the file named beside it reopens the class to add that.
#
# Mistakes in arguments are not among them: as for any Ruby method, a wrong
# type raises TypeError, a value out of range RangeError or ArgumentError,
# each naming the argument and the value.
module LeaseMachines
  # The base of every error below: `rescue LeaseMachines::Error` catches them all.
  class Error < StandardError; end

  # A store could not make a decision durable: nothing was committed, the
  # resource's state is what it was before. `cause`: the database's exception.
  class StoreError < Error; end

  # The connection failed while COMMIT was in flight: the decision may or may
  # not have been committed, and was not returned, so nobody may act on it.
  class OutcomeUnknownError < StoreError; end

  # A fence refused a write: the token is below the highest the resource has
  # accepted, or 0. Nothing was written. (fenced_error.rb)
  class FencedError < Error; end

  # A fence bound to its store refused a token the store never issued for
  # the resource. (fences/token_errors.rb)
  class UnknownTokenError < FencedError; end

  # A strict fence refused an issued token whose lease is no longer live.
  # (fences/token_errors.rb)
  class ExpiredTokenError < FencedError; end

  # A fence with signing keys refused a token whose proof none of its keys
  # made. (fences/token_errors.rb)
  class ForgedTokenError < UnknownTokenError; end

  # A plain save of an existing row of a fenced model (Fences::Record): it
  # would write without comparing tokens. Nothing was written.
  # (fences/active_record/unfenced_write_error.rb)
  class UnfencedWriteError < Error; end

  # A held lease can no longer be relied upon (at risk, expired or fenced):
  # from `Held#check!`, or raised into the block by `hold(interrupt: true)`.
  # (runtime/errors.rb)
  class LeaseLost < Error; end

  # `hold!` (or a job's lease) could not acquire the resource: another owner
  # holds it. (runtime/errors.rb)
  class Occupied < Error; end

  # An integration needs a setting nobody gave (a store, most often).
  class NotConfiguredError < Error; end

  # Also a StoreError, declared with the store's autoloaded parts (declaring
  # Stores here would define it before its autoload): Stores::UnreadableStatusesError,
  # `Store#statuses` found rows it cannot read (stores/status.rb).
end
