# frozen_string_literal: true

require "test_helper"
require "lease_machines/web"
require "lease_machines/stores/sqlite"
require "lease_machines/fences/sqlite"
require "fileutils"
require "logger"
require "stringio"
require "tmpdir"
require "rack"
require "rack/mock"
require "rack/lint"

module LeaseMachines
  # A real SQLite store (and its fence) in a temporary folder, the web UI
  # mounted at /leases under Rack::Lint, and requests made through
  # Rack::MockRequest as a browser would make them (the CSRF cookie kept).
  module WebTestHelper
    MOUNT = "/leases"

    def setup
      super
      @dir = Dir.mktmpdir("lease_machines_web")
      @path = File.join(@dir, "leases.sqlite3")
      @store = Stores::SQLite.new(@path).setup!
      @log = StringIO.new
      LeaseMachines.configure { |config| config.logger = Logger.new(@log) }
      @cookie = nil
    end

    def teardown
      @store.close
      LeaseMachines.reset_configuration!
      FileUtils.rm_rf(@dir)
      super
    end

    def mounted(web)
      Rack::MockRequest.new(Rack::Lint.new(Rack::URLMap.new(MOUNT => web)))
    end

    # GET (or another method) at `path` under the mount, keeping the CSRF cookie it sets.
    def request(app, method, path, params: nil, env: {})
      env = env.merge("HTTP_COOKIE" => @cookie) if @cookie && !env.key?("HTTP_COOKIE")
      env = env.merge(params: params) if params
      response = app.request(method, "#{MOUNT}#{path}", env)
      set = response.headers["set-cookie"]
      @cookie = set[/\A[^;]+/] if set
      response
    end

    # The CSRF field's value in a page's form.
    def csrf_field(body)
      body[/name="#{Web::CSRF::FIELD}" value="([0-9a-f]+)"/, 1] or flunk("no CSRF field in the page")
    end

    # Confirms then posts the release of `name`, as the confirmation page's form does.
    def release(app, name, env: {}, **overrides)
      confirm = request(app, "GET", "/release?name=#{URI.encode_www_form_component(name)}")
      assert_equal 200, confirm.status, confirm.body
      form = { "name" => name, "token" => confirm.body[/name="token" value="(\d+)"/, 1],
               Web::CSRF::FIELD => csrf_field(confirm.body) }.merge(overrides)
      request(app, "POST", "/release", params: form, env: env)
    end

    # The page's text between tags, for assertions on what a reader sees.
    def cells(body, css_class)
      body.scan(%r{<td class="#{css_class}">(.*?)</td>}m).flatten.map { |cell| cell.gsub(/<[^>]+>/, "") }
    end
  end
end
