# frozen_string_literal: true

module LeaseMachines
  module Fences
    # One ActiveRecord connection (adapter) as a guard uses it: the guard is
    # a {GuardTransaction}, so ActiveRecord's own transaction bookkeeping
    # sees it. Outside a transaction that is a transaction of its own; inside
    # one (an `ActiveRecord::Base.transaction` block, a Rails migration) a
    # savepoint. The mark is raised by the first statement inside it, the
    # block runs next, and the guard commits (or releases the savepoint) when
    # the block returns. A refused mark raises FencedError; the block left any
    # other way rolls the transaction (or the savepoint) back, the mark with
    # it. Raising ActiveRecord::Rollback in the block makes the guard return
    # nil, as it does for `transaction`.
    #
    # The fence's own statements go through the adapter (logged and
    # instrumented as ActiveRecord's are); their failures raise StoreError.
    # COMMIT's failures are ActiveRecord's, raised as `transaction` raises
    # them.
    class ActiveRecordSession
      NAME = "LeaseMachines::Fences"

      # One engine's SQL for ActiveRecord: `adapter` matches the adapter's
      # name, `mark_sqls` (one per {Admission} mode) and `highest_sql` take
      # bind parameters, `mark_binds` (mode, resource, token) gives a mark's
      # binds, `store_row_sql` reads the store's row (last_issued,
      # lease_token, lease_expires_at_ns, and the database clock in ns when
      # `clock_ns` is nil; else `clock_ns` reads the clock), `setup` lists the
      # statements of setup! for a schema. `session` (nil: this class) is the
      # session class of an engine whose adapter needs statements of its own
      # (MySQL: values written in, no DDL inside a transaction).
      Dialect = Struct.new(:engine, :adapter, :mark_sqls, :mark_binds, :highest_sql, :store_row_sql, :clock_ns,
                           :setup, :session, keyword_init: true)

      # @return [Failures]
      attr_reader :failures

      def initialize(adapter, dialect, failures, admission = Admission.new(:any))
        @adapter = adapter
        @dialect = dialect
        @failures = failures
        @admission = admission
      end

      # What the guard's block is given: the adapter.
      def argument
        @adapter
      end

      # @return [self]
      def ready
        name = @adapter.adapter_name
        return self if name.match?(@dialect.adapter)

        raise TypeError, "the ActiveRecord connection is #{name}, not #{@dialect.engine}: use the fence class of " \
                         "its engine"
      end

      # @return the block's value
      def guard(resource, token)
        GuardTransaction.run(@adapter) do
          raise refusal(resource, token) unless mark(resource, token) == 1

          yield @adapter
        end
      end

      # @return [FencedError] the error for a refused mark
      def refusal(resource, token)
        @admission.refusal(self, resource, token)
      end

      # @return [Integer, nil] the resource's mark
      def highest(resource)
        value = statement { @adapter.select_value(@dialect.highest_sql, NAME, [resource]) }
        StoredToken.read(value, "#{TABLE} row #{resource.inspect}")
      end

      # @return [Array(Integer, Integer, Integer, Integer), nil] see
      #   {Admission#refusal}
      def store_row(resource)
        row = statement { @adapter.select_rows(@dialect.store_row_sql, NAME, [resource]).first }
        return nil unless row

        where = "#{STORE_TABLE} row #{resource.inspect}"
        values = row.map { |value| StoredToken.read(value, where) }
        @dialect.clock_ns ? values << @dialect.clock_ns.call : values
      end

      # Runs the schema (without its comment lines: ActiveRecord 6.1 scans a
      # statement for a leading comment with a pattern that takes
      # exponential time over many comment lines).
      def setup(sql)
        sql = sql.lines.grep_v(/\A\s*--/).join
        @adapter.transaction(requires_new: true) do
          @dialect.setup.call(sql).each { |each_sql| statement { @adapter.execute(each_sql) } }
        end
      end

      private

      # Raises the mark; the engine's session may say it otherwise.
      # @return [Integer] the rows it changed (0: refused)
      def mark(resource, token)
        mode = @admission.mode
        statement do
          @adapter.exec_update(@dialect.mark_sqls.fetch(mode), NAME, @dialect.mark_binds.call(mode, resource, token))
        end
      end

      def statement
        yield
      rescue ::ActiveRecord::StatementInvalid => e
        raise @failures.statement(e.cause || e)
      end
    end
  end
end
