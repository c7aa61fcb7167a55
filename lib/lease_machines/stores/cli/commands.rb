# frozen_string_literal: true

module LeaseMachines
  module Stores
    class CLI
      # One command on an open store: `status` and `doctor` (read-only), `release` and `reconcile`.
      class Commands
        READ_ONLY = %w[status doctor].freeze
        private_constant :READ_ONLY

        def initialize(invocation, output)
          @invocation = invocation
          @output = output
        end

        def run
          spec = StoreSpec.new(@invocation.store, timeout: @invocation.timeout,
                                                  readonly: READ_ONLY.include?(@invocation.command))
          # The command, one Arguments accepts, names its method here.
          spec.open { |store| send(@invocation.command, store) }
        end

        private

        def status(store)
          name = @invocation.names.first
          statuses, failures = read_statuses(store, name)
          raise NotFoundError, "no resource named #{CLI.quote(name)} in this store" if name && statuses.empty?

          entries = (statuses + failures.to_a).sort_by { |entry| entry.is_a?(Status) ? entry.name : entry.first }
          @output.statuses(entries)
          failures.each { |bad, error| @output.warn("resource #{CLI.quote(bad)} cannot be read: #{error.message}") }
          failures.empty? ? EXIT_OK : EXIT_NOT_FOUND
        end

        def read_statuses(store, name)
          return [[status_of(store, name)].compact, {}] if name

          matching(store.statuses, {})
        rescue UnreadableStatusesError => e
          matching(e.statuses, e.failures)
        end

        # A row that cannot be read is exit 1, like an unreadable row in the list, not a failure of the store.
        def status_of(store, name)
          store.status(name)
        rescue UnreadableStatusesError
          raise
        rescue StoreError => e
          unreadable = begin
            store.statuses && nil
          rescue UnreadableStatusesError => list
            list.failures[name]
          end
          raise unreadable ? NotFoundError.new(unreadable.message) : e
        end

        def matching(statuses, failures)
          return [statuses, failures] unless @invocation.match

          pattern = NamePattern.new(@invocation.match)
          [statuses.select { |status| pattern.match?(status.name) }, failures.select { |bad, _error| pattern.match?(bad) }]
        end

        def doctor(store)
          durability = store.durability
          @output.durability(durability)
          durability.strict? ? EXIT_OK : EXIT_AT_RISK
        end

        def reconcile(store)
          fences = StoreSpec.new(@invocation.fences || @invocation.store, timeout: @invocation.timeout, readonly: true)
          fences.open(:fences) { |opened| @output.reconciled(store.reconcile(opened)) }
          EXIT_OK
        end

        def release(store)
          name = @invocation.names.first
          before = store.force_release(name)
          raise NotFoundError, "no resource named #{CLI.quote(name)} in this store" unless before

          @output.released(name, before)
          EXIT_OK
        end
      end
    end
  end
end
