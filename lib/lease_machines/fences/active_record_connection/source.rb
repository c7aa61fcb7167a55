# frozen_string_literal: true

module LeaseMachines
  module Fences
    module Connections
      # ActiveRecord as a fence's connection. With a class or a pool every
      # call uses the calling thread's connection, so a guard inside an
      # `ActiveRecord::Base.transaction` block joins that transaction.
      class ActiveRecord
        # Whether `connection` is something this source takes.
        def self.accepts?(connection)
          model_class?(connection) || pool?(connection) || adapter?(connection)
        end

        def self.model_class?(connection)
          connection.is_a?(Class) && connection.respond_to?(:connection_pool)
        end

        def self.pool?(connection)
          connection.respond_to?(:with_connection) && connection.respond_to?(:checkout)
        end

        def self.adapter?(connection)
          connection.respond_to?(:raw_connection) && connection.respond_to?(:transaction_open?)
        end

        # @param dialect [ActiveRecordSession::Dialect]
        # @param admission [Admission] which tokens the mark admits
        def initialize(connection, dialect, failures, admission = Admission.new(:any))
          @dialect = dialect
          @failures = failures
          @admission = admission
          if ActiveRecord.adapter?(connection)
            @adapter = connection
          else
            @pool = ActiveRecord.model_class?(connection) ? connection.connection_pool : connection
          end
        end

        def with
          return yield session(@adapter) if @adapter

          @pool.with_connection { |adapter| yield session(adapter) }
        end

        def close; end

        def to_s
          @adapter ? "an ActiveRecord connection" : "ActiveRecord's pool"
        end

        private

        def session(adapter)
          (@dialect.session || ActiveRecordSession).new(adapter, @dialect, @failures, @admission).ready
        end
      end
    end
  end
end
