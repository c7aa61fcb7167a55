# frozen_string_literal: true

# The floor of the in-process benchmarks: Ruby methods with the same arguments
# as the gem's, each returning one newly allocated small object. No Ruby method
# that answers with a new object can be cheaper, so "gem time / floor time"
# says how far the gem is from free.
class Floor
  # The small object. `lease.token` answers 1, so loops that read the token of
  # a grant run unchanged against the floor.
  class Result
    def lease = self
    def token = 1
  end

  # rubocop:disable Lint/UnusedMethodArgument
  def acquire(owner:, now:, ttl:) = Result.new
  def renew(owner:, token:, now:, ttl:) = Result.new
  def release(owner:, token:, now:) = Result.new
  def accept(token) = Result.new
  # rubocop:enable Lint/UnusedMethodArgument
end
