# frozen_string_literal: true

module LeaseMachines
  class Web
    # The pages, whoever serves them. No parameter reaches the store but a resource name, checked and bound.
    class Pages
      Page = Struct.new(:status, :title, :body, :location, keyword_init: true)

      Frame = Struct.new(:index_path, :base, :csrf_field, :read_only, keyword_init: true) do
        def path(action, params = {}) = HTML.url("#{base}/#{action}", params)
        def index(params = {}) = HTML.url(index_path, params)
      end

      Mark = Struct.new(:highest, :error)

      VIEWS = Views.new.freeze
      private_constant :VIEWS

      def initialize(store:, fences:, per_page:, events:)
        @store = store
        @fences = fences
        @per_page = per_page
        @events = events
      end

      def index(params, frame)
        guarded(frame) do
          store = @store.call
          listing = Listing.new(store.names, filter: params["match"], page: params["page"], per_page: @per_page) do |names|
            statuses_and_failures(store, names)
          end
          Page.new(status: 200, title: "Leases", body: VIEWS.index(frame, listing))
        end
      end

      def resource(params, frame)
        with_status(params, frame) do |status|
          notice = "Released. The next grant gets a token greater than #{status.last_issued}." if params["released"]
          body = VIEWS.resource(frame, status, mark(status.name), @events, notice)
          Page.new(status: 200, title: status.name, body: body)
        end
      end

      def confirm(params, frame)
        return read_only(frame) if frame.read_only

        with_status(params, frame) do |status|
          next message(frame, 200, "#{status.name} has no lease to release.", back(frame, status.name)) unless status.lease

          Page.new(status: 200, title: "Release #{status.name}?", body: VIEWS.confirm(frame, status))
        end
      end

      def release(params, frame, by:)
        return read_only(frame) if frame.read_only

        with_status(params, frame) do |status|
          seen = params["token"].to_s
          if status.lease.nil? || status.lease.token.to_s != seen
            next message(frame, 409, "The lease of #{status.name} changed since you confirmed (token #{seen.inspect}, " \
                                     "now #{status.lease&.token || 'none'}): nothing was released.",
                         ["Look again", frame.path("resource", "name" => status.name)])
          end

          force_release(status.name, by)
          Page.new(status: 303, title: "Released", location: frame.path("resource", "name" => status.name, "released" => 1))
        end
      end

      def layout(frame, page) = VIEWS.layout(frame, page.title, page.body)
      def not_found(frame) = message(frame, 404, "No such page.", nil)
      def message(frame, status, text, link) = Page.new(status:, title: text[0, 80], body: VIEWS.message(frame, text, link))
      def read_only(frame) = message(frame, 403, "This UI is read-only: nothing can be released from it.", nil)

      private

      def guarded(frame)
        yield
      rescue Error => e
        message(frame, 503, "The lease store cannot be read: #{e.message}", nil)
      end

      def with_status(params, frame)
        name = params["name"]
        return message(frame, 400, "Which resource? The page needs its name (name=...).", nil) unless name.is_a?(String)

        begin
          name = Stores.resource_name(name)
        rescue ArgumentError => e
          return message(frame, 400, "Bad resource name: #{e.message}", nil)
        end
        guarded(frame) do
          status = @store.call.status(name)
          status ? yield(status) : message(frame, 404, "No resource named #{name.inspect} in this store.", nil)
        end
      end

      def statuses_and_failures(store, names)
        [store.statuses(names), {}]
      rescue Stores::UnreadableStatusesError => e
        [e.statuses, e.failures]
      end

      def mark(name)
        return nil unless @fences

        Mark.new(@fences.highest(name), nil)
      rescue Error => e
        Mark.new(nil, e.message)
      end

      def back(frame, name) = ["Back to #{name}", frame.path("resource", "name" => name)]

      # {Stores::Store#force_release}, told in the log and as a `force_released` event.
      def force_release(name, by)
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        before = @store.call.force_release(name)
        return unless before

        lease = before.lease
        Logging.warning("lease_machines: #{Logging.subject(name, nil)} force-released from the web UI by " \
                        "#{by.inspect}: #{release_summary(before)}")
        Events.emit(:force_released, { resource: name, owner: lease&.owner, token: lease&.token,
                                       status: lease ? :released : :free, reason: :forced, by: by,
                                       duration: Process.clock_gettime(Process::CLOCK_MONOTONIC) - started })
      end

      def release_summary(before)
        lease = before.lease
        return "it had no lease (last issued #{before.last_issued || '-'})" unless lease

        "cleared the lease of owner #{lease.owner} (token #{lease.token}); last issued stays " \
          "#{before.last_issued}, so the next grant gets a greater token and the old holder is fenced"
      end
    end
  end
end
