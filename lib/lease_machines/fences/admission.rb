# frozen_string_literal: true

require_relative "token_errors"

module LeaseMachines
  module Fences
    # Which tokens a fence admits (:any, :issued, :live), and why it refused
    # one: the mark statement checks it all; the reasons are read only after
    # a refusal, for the error.
    class Admission
      MODES = %i[any issued live].freeze

      attr_reader :mode

      # @raise [TypeError] for a non-boolean option
      # @raise [ArgumentError] for strict without store
      def self.from(store:, strict:)
        { store: store, strict: strict }.each do |name, value|
          raise TypeError, "#{name} must be true or false, got #{value.inspect}" unless [true, false].include?(value)
        end
        if strict && !store
          raise ArgumentError, "strict: true needs store: true (the lease is read from the store's table in the " \
                               "fence's database)"
        end

        new(strict ? :live : (store ? :issued : :any)) # rubocop:disable Style/NestedTernaryOperator
      end

      def initialize(mode)
        raise ArgumentError, "unknown admission #{mode.inspect}" unless MODES.include?(mode)

        @mode = mode
        freeze
      end

      def bound?
        @mode != :any
      end

      def strict?
        @mode == :live
      end

      # The error for a refused mark, read in the guard's transaction.
      # `owner`: the guard's; a mark equal to the token that records
      # another owner refused it as reissued, whatever the store says.
      # @return [FencedError]
      def refusal(session, resource, token, record: nil, owner: nil)
        Refusals.report(error(session, resource, token, record, owner))
      end

      private

      def error(session, resource, token, record, owner)
        highest = session.highest(resource)
        row = session.store_row(resource) if bound?
        reissued(session, resource, token, highest, owner, record) ||
          leased_to_another(row, resource, token, highest, owner, record) ||
          refused(row, resource, token, highest, record)
      end

      # `row`: the store's (last_issued, lease_token, lease_expires_at_ns,
      # clock_ns, lease_owner), nil when unbound or when it has none.
      def refused(row, resource, token, highest, record)
        last_issued, lease_token, expires_at_ns, clock_ns = row
        issued = !last_issued.nil? && token <= last_issued
        if !bound? || (issued && highest && token < highest)
          FencedError.new(resource: resource, token: token, highest: highest, record: record)
        elsif issued && strict?
          ExpiredTokenError.new(resource: resource, token: token, highest: highest, last_issued: last_issued,
                                lease_token: lease_token, expires_at_ns: expires_at_ns, clock_ns: clock_ns,
                                record: record)
        else
          # Not issued; or issued, at or above the mark, and not strict: the
          # store issued it after the statement ran (a race), so when the
          # statement ran, it was unknown.
          UnknownTokenError.new(resource: resource, token: token, highest: highest, last_issued: last_issued,
                                record: record)
        end
      end

      # Strict: the store's lease holds this token for another owner than
      # the guard's, so the token was issued twice (a failover lost the
      # first grant). @return [ReissuedTokenError, nil]
      def leased_to_another(row, resource, token, highest, owner, record) # rubocop:disable Metrics/ParameterLists
        return nil unless strict? && owner && row && (highest.nil? || token >= highest)

        _, lease_token, _, _, lease_owner = row
        return nil unless lease_token == token && lease_owner && lease_owner != owner

        ReissuedTokenError.new(resource: resource, token: token, highest: highest, owner: owner,
                               recorded_owner: lease_owner, record: record, leased: true)
      end

      # @return [ReissuedTokenError, nil]
      def reissued(session, resource, token, highest, owner, record) # rubocop:disable Metrics/ParameterLists
        return nil if owner.nil? || highest != token

        recorded = session.mark_owner(resource)
        return nil if recorded.nil? || recorded == owner

        ReissuedTokenError.new(resource: resource, token: token, highest: highest, owner: owner,
                               recorded_owner: recorded, record: record)
      end
    end
  end
end
