# frozen_string_literal: true

require "sidekiq"
require "sidekiq/web"
require "lease_machines/web"

module LeaseMachines
  class Web
    # The UI's pages as a Sidekiq Web tab (one adapter per extension API), behind Sidekiq's own CSRF protection.
    module SidekiqTab
      INDEX = "leases"
      # The page's HTML goes in as a local, never as template source.
      BODY = "<%= lease_machines_body %>"
      ROUTES = [[:get, "", :index], [:get, "/resource", :resource], [:get, "/release", :confirm],
                [:post, "/release", :release]].freeze
      private_constant :BODY, :ROUTES

      @lock = Mutex.new
      @web = nil

      class << self
        attr_reader :web

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

        def adapter
          version = Gem::Version.new(::Sidekiq::VERSION)
          return Sidekiq8 if version >= Gem::Version.new("8.0")
          return Sidekiq7 if version >= Gem::Version.new("7.3")

          Sidekiq6
        end

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

        def params(action)
          [action.request.params, nil]
        rescue ArgumentError => e
          [nil, e.message]
        end
      end

      # What Sidekiq Web calls with its application class: the tab's routes.
      module Extension
        def self.registered(app)
          ROUTES.each { |method, path, page| app.public_send(method, "/#{INDEX}#{path}") { SidekiqTab.serve(self, page) } }
        end
      end

      # Sidekiq 6 (and 7.0 to 7.2): `Sidekiq::Web.register(extension)` calls `extension.registered(app)`; the tab is
      # an entry of `Sidekiq::Web.tabs`.
      module Sidekiq6
        def self.register(extension, tab:, index:)
          ::Sidekiq::Web.register(extension)
          ::Sidekiq::Web.tabs[tab] = index
        end
      end

      # Sidekiq 7.3: `Sidekiq::Web.register(extension, name:, tab:, index:)` adds the tab and calls `registered`.
      module Sidekiq7
        def self.register(extension, tab:, index:) = ::Sidekiq::Web.register(extension, name: "lease_machines", tab:, index:)
      end

      # Sidekiq 8: `Sidekiq::Web.configure`, before the first request (Sidekiq freezes its configuration then).
      module Sidekiq8
        def self.register(extension, tab:, index:)
          ::Sidekiq::Web.configure do |config|
            config.register_extension(extension, name: "lease_machines", tab: tab, index: index)
          end
        end
      end
    end
  end
end
