# frozen_string_literal: true

module LeaseMachines
  module Fences
    # What a fenced row write shows when its model is bound or signed: the
    # lease's resource name, token, owner and proof (the row does not know
    # which lease it belongs to). A frozen value, checked when made.
    class Pass
      # @return [String] the lease's resource name
      attr_reader :resource
      # @return [Integer] the token
      attr_reader :token
      # @return [String, nil] the token's proof (Lease#proof)
      attr_reader :proof
      # @return [Integer, nil] the owner the token was granted to (nil: not given)
      attr_reader :owner

      # @param lease [Lease, Integer] the lease, or its token
      # @param proof [String, nil] with a token: its proof
      # @param owner [Integer, nil] with a token: the owner it was granted to
      #   (a signed model needs it: the proof signs it)
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
