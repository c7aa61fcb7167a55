# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # A connection this store opens from a URL, and opens anew in a forked
      # child (see {ProcessLocal}); a Mutex serializes its use. Where the
      # engine says so (`engine.reopen?`: MySQL's, which its Session closes
      # when it failed), a closed one is opened again before the next call.
      #
      # A child never sends anything on the connection it inherited: before
      # its first use (or close) of the store, the engine silences it
      # (`engine.silence`), so that finalizing it when the child exits sends
      # nothing, and the parent's session lives on.
      class Owned
        # @param url [String] checked by the engine now, connected to on first use
        def initialize(url, engine)
          connect = engine.connector(url)
          @engine = engine
          @mutex = Mutex.new
          @session = ProcessLocal.new(inherited: engine.method(:silence)) { engine.session(connect.call) }
        end

        def with
          @mutex.synchronize do
            session = @session.current
            if @engine.reopen?(session.connection)
              @session.close { nil } # it failed and was closed: open a new one
              session = @session.current
            end
            yield session.ready
          end
        end

        def close
          @mutex.synchronize { @session.close { |session| @engine.close(session.connection) } }
        end
      end
    end
  end
end
