# frozen_string_literal: true

module LeaseMachines
  module Fences
    # One ActiveRecord connection (adapter) as a guard uses it: the statements go
    # through the adapter (logged, instrumented), the guard's transaction through its
    # transaction manager.
    class ActiveRecordSession
      include Admission::Reads

      NAME = "LeaseMachines::Fences"

      # One engine's SQL for ActiveRecord. `reads`: the SQL of {Admission::Reads}; `clock_ns`
      # reads the clock when the store's row does not; `session`: an engine's own class (nil:
      # this one); `owner_column`: [a count of the owner column, the ALTER that adds it],
      # when the schema cannot add it; `cancel`: given the adapter, cancels a statement an
      # interrupt left running, before the rollback waits for it.
      Dialect = Struct.new(:engine, :adapter, :mark_sqls, :mark_binds, :reads, :clock_ns, :setup, :owner_column,
                           :session, :cancel, keyword_init: true)

      def initialize(adapter, dialect, failures, admission = Admission.new(:any))
        @adapter = adapter
        @dialect = dialect
        @failures = failures
        @admission = admission
      end

      def ready
        name = @adapter.adapter_name
        return self if name.match?(@dialect.adapter)

        raise TypeError, "the ActiveRecord connection is #{name}, not #{@dialect.engine}: use the fence class of " \
                         "its engine"
      end

      # Unlike `transaction`, commits only when the block returns: ActiveRecord 6.1 commits
      # a transaction left by a throw (Timeout on Ruby 3.1/3.2), 7.1+ one left by `throw`,
      # `break` or `return`, which for a guard would commit a half-run block.
      # @return the block's value, nil when it raised ActiveRecord::Rollback
      def guard(resource, token, owner = nil)
        @adapter.lock.synchronize do
          transaction = @adapter.begin_transaction(joinable: true)
          returned = false
          value = begin
            raise refusal(resource, token, owner) unless mark(resource, token, owner) == 1

            yield(@adapter).tap { returned = true }
          rescue ::ActiveRecord::Rollback
            nil
          ensure
            unless returned
              @dialect.cancel&.call(@adapter)
              @adapter.rollback_transaction if @adapter.current_transaction.equal?(transaction)
            end
          end
          returned ? commit(transaction, value) : value
        end
      end

      def mark_rows = statement { @adapter.select_rows(Mark::SQL, NAME) }

      # Without its comment lines: ActiveRecord 6.1 scans a statement for a leading
      # comment with a pattern that takes exponential time over many of them.
      def setup(sql)
        sql = sql.lines.grep_v(/\A\s*--/).join
        @adapter.transaction(requires_new: true) do
          @dialect.setup.call(sql).each { |each_sql| statement { @adapter.execute(each_sql) } }
          add_owner_column
        end
      end

      private

      def read(kind, resource)
        row = statement { @adapter.select_rows(@dialect.reads.fetch(kind), NAME, [resource]).first }
        row && kind == :store_row && @dialect.clock_ns ? row.dup.insert(3, @dialect.clock_ns.call) : row
      end

      # As ActiveRecord does: a failed COMMIT is rolled back unless the database ended it.
      def commit(transaction, value)
        @adapter.commit_transaction
        value
      rescue Exception # rubocop:disable Lint/RescueException -- as ActiveRecord's own transaction does
        @adapter.rollback_transaction(transaction) unless transaction.state.completed?
        raise
      end

      # @return [Integer] the rows it changed (0: refused)
      def mark(resource, token, owner)
        mode = @admission.mode
        binds = @dialect.mark_binds.call(mode, resource, token, owner)
        statement { @adapter.exec_update(@dialect.mark_sqls.fetch(mode), NAME, binds) }
      end

      def add_owner_column
        return unless @dialect.owner_column

        has, add = @dialect.owner_column
        statement { @adapter.execute(add) } if Integer(statement { @adapter.select_value(has, NAME) }).zero?
      end

      def statement
        yield
      rescue ::ActiveRecord::StatementInvalid => e
        raise @failures.statement(e.cause || e)
      end
    end

    module Connections
      # ActiveRecord as a fence's connection. With a class or a pool every call uses the
      # calling thread's connection, so a guard inside a transaction block joins it.
      class ActiveRecord
        def self.accepts?(connection) = model_class?(connection) || pool?(connection) || adapter?(connection)
        def self.model_class?(connection) = connection.is_a?(Class) && connection.respond_to?(:connection_pool)
        def self.pool?(connection) = connection.respond_to?(:with_connection) && connection.respond_to?(:checkout)
        def self.adapter?(connection) = connection.respond_to?(:raw_connection) && connection.respond_to?(:transaction_open?)

        def initialize(connection, dialect, failures, admission = Admission.new(:any))
          @dialect = dialect
          @failures = failures
          @admission = admission
          @adapter = connection if ActiveRecord.adapter?(connection)
          @pool = ActiveRecord.model_class?(connection) ? connection.connection_pool : connection unless @adapter
        end

        def with
          return yield session(@adapter) if @adapter

          @pool.with_connection { |adapter| yield session(adapter) }
        end

        def close; end

        def to_s = @adapter ? "an ActiveRecord connection" : "ActiveRecord's pool"

        private

        def session(adapter) = (@dialect.session || ActiveRecordSession).new(adapter, @dialect, @failures, @admission).ready
      end
    end
  end
end
