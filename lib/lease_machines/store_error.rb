# frozen_string_literal: true

module LeaseMachines
  # A store could not make a decision durable: the database refused, the
  # connection was lost before COMMIT, a lock could not be taken in time, or a
  # stored row is not a valid checkpoint. No decision is returned, and the
  # transaction did not commit: the resource's state is what it was before.
  # The error's `cause` is the database's own exception.
  class StoreError < StandardError; end

  # The connection failed while COMMIT was in flight: the decision may or may
  # not have been committed. It was not returned, so nobody may act on it; a
  # granted lease that did commit simply runs out. Token state never goes back
  # either way, so the next call (on a healthy connection) continues the
  # history safely.
  class OutcomeUnknownError < StoreError; end
end
