# frozen_string_literal: true

require_relative "token_errors"

module LeaseMachines
  module Fences
    # Which tokens a fence admits (:any, :issued, :live), and why it refused one: the
    # mark statement checks it all; the reasons are read only after a refusal.
    class Admission
      MODES = %i[any issued live].freeze

      attr_reader :mode

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

      def bound? = @mode != :any
      def strict? = @mode == :live

      # The error for a refused mark, read in the guard's transaction. A mark equal to
      # the token that records another owner than `owner` refused it as reissued.
      def refusal(session, resource, token, record: nil, owner: nil)
        Refusals.report(error(session, resource, token, record, owner))
      end

      # What a fence's session gives {Admission#refusal}: each engine's session reads
      # the first row of `read(kind, resource)` (:highest, :owner, :store_row; nil: none).
      module Reads
        attr_reader :failures

        def refusal(resource, token, owner = nil) = @admission.refusal(self, resource, token, owner: owner)
        def highest(resource) = stored(read(:highest, resource)&.first, resource)
        def mark_owner(resource) = stored(read(:owner, resource)&.first, resource, OWNER_COLUMN)

        # The store's last_issued, lease_token, lease_expires_at_ns, the clock in ns and
        # lease_owner; nil when the store has no row for `resource`.
        def store_row(resource)
          read(:store_row, resource)&.map { |value| StoredToken.read(value, "#{STORE_TABLE} row #{resource.inspect}") }
        end

        private

        def stored(value, resource, column = nil)
          StoredToken.read(value, "#{TABLE} row #{resource.inspect}#{" (#{column})" if column}")
        end
      end

      private

      # `shown`: the refused write's FencedError keywords.
      def error(session, resource, token, record, owner)
        shown = { resource: resource, token: token, highest: session.highest(resource), record: record }
        row = session.store_row(resource) if bound?
        reissued(session, owner, **shown) || leased_to_another(row, owner, **shown) || refused(row, **shown)
      end

      # `row`: the store's (last_issued, lease_token, lease_expires_at_ns, clock_ns, lease_owner), or nil.
      def refused(row, **shown)
        last_issued, lease_token, expires_at_ns, clock_ns = row
        token, highest = shown.values_at(:token, :highest)
        issued = !last_issued.nil? && token <= last_issued
        if !bound? || (issued && highest && token < highest)
          FencedError.new(**shown)
        elsif issued && strict?
          ExpiredTokenError.new(**shown, last_issued: last_issued, lease_token: lease_token, expires_at_ns: expires_at_ns,
                                         clock_ns: clock_ns)
        else
          # Issued at or above the mark, not strict: the store issued it after the statement ran (a race).
          UnknownTokenError.new(**shown, last_issued: last_issued)
        end
      end

      # Strict: the store's lease holds this token for another owner, so it was issued twice.
      def leased_to_another(row, owner, **shown)
        token, highest = shown.values_at(:token, :highest)
        return nil unless strict? && owner && row && (highest.nil? || token >= highest)

        _, lease_token, _, _, lease_owner = row
        return nil unless lease_token == token && lease_owner && lease_owner != owner

        ReissuedTokenError.new(**shown, owner: owner, recorded_owner: lease_owner, leased: true)
      end

      def reissued(session, owner, **shown)
        return nil if owner.nil? || shown[:highest] != shown[:token]

        recorded = session.mark_owner(shown[:resource])
        return nil if recorded.nil? || recorded == owner

        ReissuedTokenError.new(**shown, owner: owner, recorded_owner: recorded)
      end
    end
  end
end
