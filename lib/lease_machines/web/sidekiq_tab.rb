# frozen_string_literal: true

require "sidekiq"
require "sidekiq/web"
require "lease_machines/web"

module LeaseMachines
  class Web
    # The UI's pages as a tab of Sidekiq Web, registered through the
    # running Sidekiq's own extension API (one adapter per API: sidekiq_tab/):
    #
    #   require "lease_machines/web/sidekiq_tab"
    #   LeaseMachines::Web::SidekiqTab.register(LeaseMachines::Web.new(store: store))
    #
    # Inside Sidekiq Web the forms carry Sidekiq's own CSRF protection (a
    # session token on 6 and 7, the browser's Sec-Fetch-Site on 8), in place
    # of the standalone app's. One tab per process: a later `register`
    # replaces the UI the tab serves.
    module SidekiqTab
      # The tab's path under Sidekiq Web's root.
      INDEX = "leases"
      # Sidekiq renders a String as an ERB template: the page's HTML goes in
      # as a local, never as template source.
      BODY = "<%= lease_machines_body %>"
      # The pages each route serves.
      ROUTES = [[:get, "", :index], [:get, "/resource", :resource], [:get, "/release", :confirm],
                [:post, "/release", :release]].freeze
      private_constant :BODY, :ROUTES

      @lock = Mutex.new
      @web = nil

      class << self
        # @return [Web, nil] the UI the tab serves
        attr_reader :web

        # Adds the tab (once per process) and serves `web` in it.
        # @param web [Web]
        # @param tab [String] the tab's label
        # @return [Web]
        def register(web = Web.new, tab: "Leases")
          raise TypeError, "web must be a LeaseMachines::Web, got #{web.inspect}" unless web.is_a?(Web)
          raise TypeError, "tab must be a String, got #{tab.inspect}" unless tab.is_a?(String)

          @lock.synchronize do
            first = @web.nil?
            @web = web
            adapter.register(Extension, tab: tab, index: INDEX) if first
          end
          web
        end

        # @return [Module] the adapter of the running Sidekiq's extension API
        def adapter
          version = Gem::Version.new(::Sidekiq::VERSION)
          return Sidekiq8 if version >= Gem::Version.new("8.0")
          return Sidekiq7 if version >= Gem::Version.new("7.3")

          Sidekiq6
        end

        # @api private: one request, in the Sidekiq Web action that routed it
        def serve(action, page)
          web = @web
          frame = Pages::Frame.new(index_path: "#{action.root_path}#{INDEX}", base: "#{action.root_path}#{INDEX}",
                                   csrf_field: action.csrf_tag, read_only: web.read_only?)
          answer = answer(web, action, page, frame)
          return [answer.status, { "location" => answer.location }, []] if answer.location

          html = action.erb(BODY, locals: { lease_machines_body: answer.body })
          answer.status == 200 ? html : [answer.status, { "content-type" => "text/html; charset=utf-8" }, [html]]
        end

        private

        def answer(web, action, page, frame)
          params, unreadable = params(action)
          return web.pages.message(frame, 400, "The request cannot be read: #{unreadable}", nil) if unreadable
          return web.pages.release(params, frame, by: web.who(action.env)) if page == :release

          web.pages.public_send(page, params, frame)
        end

        # @return [Array(Hash, nil), Array(nil, String)] the parameters, or
        #   why Rack cannot read the query or the form
        def params(action)
          [action.request.params, nil]
        rescue ArgumentError => e
          [nil, e.message]
        end
      end

      # What Sidekiq Web calls with its application class: the tab's routes.
      module Extension
        def self.registered(app)
          ROUTES.each do |method, path, page|
            app.public_send(method, "/#{INDEX}#{path}") { SidekiqTab.serve(self, page) }
          end
        end
      end
    end
  end
end

require_relative "sidekiq_tab/sidekiq6"
require_relative "sidekiq_tab/sidekiq7"
require_relative "sidekiq_tab/sidekiq8"
