# frozen_string_literal: true

module LeaseMachines
  module Fences
    # One ActiveRecord connection (adapter) as a guard uses it: the guard is
    # a {GuardTransaction}, so ActiveRecord's own transaction bookkeeping
    # sees it; the statements go through the adapter (logged, instrumented).
    class ActiveRecordSession
      NAME = "LeaseMachines::Fences"

      # One engine's SQL for ActiveRecord. `clock_ns` reads the clock when
      # `store_row_sql` does not; `session` (nil: this class) is for an engine
      # that needs statements of its own (MySQL: values written in, no DDL
      # inside a transaction). `owner_column`: [whether the table has the
      # owner column (a count), the ALTER that adds it], for an engine whose
      # schema SQL cannot add it itself (nil: it does).
      Dialect = Struct.new(:engine, :adapter, :mark_sqls, :mark_binds, :highest_sql, :owner_sql, :store_row_sql,
                           :clock_ns, :setup, :owner_column, :session, keyword_init: true)

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
      def guard(resource, token, owner = nil)
        GuardTransaction.run(@adapter) do
          raise refusal(resource, token, owner) unless mark(resource, token, owner) == 1

          yield @adapter
        end
      end

      # @return [FencedError] the error for a refused mark
      def refusal(resource, token, owner = nil)
        @admission.refusal(self, resource, token, owner: owner)
      end

      # @return [Integer, nil] the owner recorded with the resource's mark
      def mark_owner(resource)
        value = statement { @adapter.select_value(@dialect.owner_sql, NAME, [resource]) }
        StoredToken.read(value, "#{TABLE} row #{resource.inspect} (#{OWNER_COLUMN})")
      end

      # @return [Array<Array>] the rows of {Mark::SQL}
      def mark_rows
        statement { @adapter.select_rows(Mark::SQL, NAME) }
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
        @dialect.clock_ns ? values.insert(3, @dialect.clock_ns.call) : values
      end

      # Runs the schema (without its comment lines: ActiveRecord 6.1 scans a
      # statement for a leading comment with a pattern that takes
      # exponential time over many comment lines).
      def setup(sql)
        sql = sql.lines.grep_v(/\A\s*--/).join
        @adapter.transaction(requires_new: true) do
          @dialect.setup.call(sql).each { |each_sql| statement { @adapter.execute(each_sql) } }
          add_owner_column
        end
      end

      private

      # Raises the mark; the engine's session may say it otherwise.
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
  end
end
