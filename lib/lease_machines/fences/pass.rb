# frozen_string_literal: true

module LeaseMachines
  module Fences
    # What a fenced row write shows when its model is bound or signed: the
    # lease's resource name, token and proof (the row does not know which
    # lease it belongs to). A frozen value, checked when made.
    class Pass
      # @return [String] the lease's resource name
      attr_reader :resource
      # @return [Integer] the token
      attr_reader :token
      # @return [String, nil] the token's proof (Lease#proof)
      attr_reader :proof

      # @param lease [Lease, Integer] the lease, or its token
      # @param proof [String, nil] with a token: its proof
      def initialize(resource, lease, proof: nil)
        @resource = Stores.resource_name(resource, argument: "resource")
        @token, @proof = Token.presented(lease, proof)
        freeze
      end

      def ==(other)
        other.instance_of?(Pass) && [other.resource, other.token, other.proof] == [@resource, @token, @proof]
      end
      alias eql? ==

      def hash
        [Pass, @resource, @token, @proof].hash
      end

      def inspect
        "#<#{self.class.name} resource=#{@resource.inspect} token=#{@token}#{" proof=#{@proof.inspect}" if @proof}>"
      end
      alias to_s inspect
    end
  end
end
