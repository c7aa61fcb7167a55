# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # `hold(limit: N)`: N slot leases, each an ordinary resource of the
    # store with its own token sequence (docs/RUNTIME.md, "Concurrency
    # limits"). This is the one place a slot is named.
    module Slots
      # What separates a resource from its slot's index: `"#{resource}#slot-#{index}"`.
      # Other resources must not use names of this form.
      SEPARATOR = "#slot-"
      # The largest limit: every attempt of a wait tries each slot once.
      MAX = 256

      # @param resource [String] the limited resource (a checked name)
      # @param index [Integer] 0...limit
      # @param limit [Integer] a checked limit
      # @return [String] the slot's resource name: the resource itself when
      #   the limit is 1 (a limit-1 holder and a plain `hold` exclude each other)
      def self.slot_name(resource, index, limit)
        limit == 1 ? resource : "#{resource}#{SEPARATOR}#{index}"
      end

      # @return [String] the limited resource of a slot's name; any other name as it is
      def self.limited(name)
        name.sub(/#{Regexp.escape(SEPARATOR)}\d+\z/o, "")
      end

      # @return [Boolean] whether `name` is `resource` or one of its slots
      def self.of?(name, resource)
        name == resource || (name.start_with?("#{resource}#{SEPARATOR}") &&
                             name.delete_prefix("#{resource}#{SEPARATOR}").match?(/\A\d+\z/))
      end

      # @return [Integer] `limit`, when it is an Integer from 1 to {MAX}
      # @raise [TypeError, ArgumentError] naming `limit` and the value
      def self.check(limit, argument: "limit")
        unless limit.is_a?(Integer)
          raise TypeError, "#{argument} must be an Integer from 1 to #{MAX} (holders at once), got #{Stores.described(limit)}"
        end
        unless limit.between?(1, MAX)
          raise ArgumentError, "#{argument} must be an Integer from 1 to #{MAX} (holders at once), got #{limit}"
        end

        limit
      end
    end
  end
end
