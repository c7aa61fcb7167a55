# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # `hold(limit:)`: the slot leases' names and the limit's check.
    module Slots
      SEPARATOR = "#slot-"
      MAX = 256

      def self.slot_name(resource, index, limit) = limit == 1 ? resource : "#{resource}#{SEPARATOR}#{index}"

      def self.limited(name) = name.sub(/#{Regexp.escape(SEPARATOR)}\d+\z/o, "")

      def self.of?(name, resource)
        name == resource || (name.start_with?("#{resource}#{SEPARATOR}") &&
                             name.delete_prefix("#{resource}#{SEPARATOR}").match?(/\A\d+\z/))
      end

      def self.check(limit, argument: "limit")
        return limit if limit.is_a?(Integer) && limit.between?(1, MAX)

        shown = limit.is_a?(Integer) ? limit : Stores.described(limit)
        raise limit.is_a?(Integer) ? ArgumentError : TypeError,
              "#{argument} must be an Integer from 1 to #{MAX} (holders at once), got #{shown}"
      end
    end
  end
end
