# frozen_string_literal: true

require "lease_machines/stores/resource_name"

module LeaseMachines
  module Fences
    # What a fenced resource may be called: the stores' rule for resource
    # names (1 to 255 bytes of valid UTF-8 without NUL, compared byte for
    # byte, {Stores.resource_name}), so that one name can be a lease's and its
    # fence's. The messages name the fence's argument, `resource`.
    module ResourceName
      MAX_BYTES = Stores::NAME_MAX_BYTES

      # @return [String] the name, frozen UTF-8
      # @raise [TypeError] for a non-String
      # @raise [ArgumentError] for an empty, too long, NUL-carrying or
      #   invalid UTF-8 String
      def self.check(name)
        Stores.resource_name(name, argument: "resource")
      end
    end
  end
end
