# frozen_string_literal: true

require_relative "../fast_path"

module LeaseMachines
  module Stores
    class Postgres < Store
      # A grant meeting another decision's uncommitted write answers Native::Request#on_contention.
      class FastPath < Stores::FastPath
        def initialize(connections, statements, failures)
          super(connections, failures)
          @statements = statements
        end

        def decide(name, request, tokens, label)
          super
        rescue IOError => e # the driver's socket closed under it (no code of the caller's runs here)
          raise @failures.unavailable(e)
        end

        private

        # @return [Decision, nil] the decision, a contended grant's refusal, or nil: the row changed
        def commit(session, name, request, before, decided, label) # rubocop:disable Metrics/ParameterLists -- FastPath's
          decision, after = decided
          refusal = request.on_contention if before && decision.granted?
          unless refusal
            return write(session, name, before, after, label, notify: decision.released?) ? decision : nil
          end

          case claim(session, name, before, after, label)
          when :written then decision
          when :contended then refusal
          end
        end

        def read(session, name)
          values = @statements.run(session, READ_SQL, [name], bounded: false).values.first ||
                   @statements.run(session, CLOCK_SQL, [], bounded: false).values.first
          return values if values

          raise @failures.problem("reading resource #{name.inspect} returned no row")
        rescue PG::Error, IOError => e # IOError: the driver's socket was closed under it
          session.recover unless session.idle?
          raise @failures.failed(e, Failures::NOT_WRITTEN)
        end

        # The compare-and-set (a release's also notifies), with the label unless KEEP; whether it wrote.
        def write(session, name, before, after, label, notify:) # rubocop:disable Metrics/ParameterLists -- the row's parts
          sql = notify ? CAS_NOTIFY_SQL : CAS_SQL
          sql = CREATE_SQL if before.nil?
          sql, params = labelled(sql, before ? [name, *after, *before] : [name, *after], label)
          committed(session) { @statements.run(session, sql, params, bounded: true).cmd_tuples == 1 } || false
        end

        # A grant's compare-and-set that skips a row another decision is writing: :written, :contended or nil.
        def claim(session, name, before, after, label)
          sql, params = labelled(CAS_UNLESS_LOCKED_SQL, [name, *after, *before], label)
          committed(session) do
            written, same = @statements.run(session, sql, params, bounded: true).values.first
            if written == "t" then :written
            elsif same == "t" then :contended
            end
          end
        end

        def labelled(sql, params, label) = label == HolderLabel::KEEP ? [sql, params] : [LABELLED_OF.fetch(sql), [*params, label]]

        # REPEATABLE READ or SERIALIZABLE as the default refused the write: a concurrent one won.
        def lost_race?(session, error) = error.is_a?(PG::TRSerializationFailure) && session.idle?
      end
      private_constant :FastPath
    end
  end
end
