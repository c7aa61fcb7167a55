# frozen_string_literal: true

module LeaseMachines
  module Fences
    # What a fenced row write of a bound or signed model shows: the lease's resource
    # name, token, owner and proof. A frozen value, checked when made.
    class Pass
      attr_reader :resource, :token, :proof, :owner

      # @param lease [Lease, Integer] the lease, or its token (then `proof:` and `owner:`)
      def initialize(resource, lease, proof: nil, owner: nil)
        @resource = Stores.resource_name(resource, argument: "resource")
        @owner = Token.owner(lease, owner)
        @token, @proof = Token.presented(lease, proof)
        freeze
      end

      def ==(other)
        other.instance_of?(Pass) && fields == [other.resource, other.token, other.owner, other.proof]
      end
      alias eql? ==

      def hash
        [Pass, *fields].hash
      end

      def inspect
        "#<#{self.class.name} resource=#{@resource.inspect} token=#{@token}#{" owner=#{@owner}" if @owner}" \
          "#{" proof=#{@proof.inspect}" if @proof}>"
      end
      alias to_s inspect

      private

      def fields = [@resource, @token, @owner, @proof]
    end
  end
end
