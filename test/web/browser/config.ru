# frozen_string_literal: true

# What test/web/browser_test.rb serves to Chromium, run by `rackup -s webrick`
# in a process of its own (outside the bundle: WEBrick is a host package),
# as a host would mount the UI:
#
#   LM_APP=web      the UI at /leases on the SQLite store at LM_STORE
#   LM_APP=sidekiq  Sidekiq Web at /sidekiq with the UI's tab (REDIS_URL)
#   LM_APP=forger   another site: a page whose form posts a release to LM_TARGET
#
# The gem's log goes to LM_LOG.
require "logger"
require "lease_machines"
require "lease_machines/stores/sqlite"
require "lease_machines/fences/sqlite"

LeaseMachines.configure do |config|
  config.logger = Logger.new(ENV.fetch("LM_LOG"))
  config.store = LeaseMachines::Stores::SQLite.new(ENV.fetch("LM_STORE"))
end

case ENV.fetch("LM_APP")
when "web"
  # The fences' table is in the store's database: the resource pages show its marks.
  map("/leases") { run LeaseMachines::Web.new(fences: LeaseMachines::Fences::SQLite.new(ENV.fetch("LM_STORE"))) }
when "sidekiq"
  require "securerandom"
  require "rack/session/cookie"
  require "lease_machines/web/sidekiq_tab"
  Sidekiq.configure_client { |config| config.redis = { url: ENV.fetch("REDIS_URL") } }
  require_relative "../../support/quiet_sidekiq"
  LeaseMachines::QuietSidekiq.logger!
  LeaseMachines::Web::SidekiqTab.register(LeaseMachines::Web.new)
  use Rack::Session::Cookie, secret: SecureRandom.hex(64), same_site: true
  map("/sidekiq") { run Sidekiq::Web }
when "forger"
  fields = ENV.fetch("LM_FIELDS").split("&").map do |pair|
    name, value = pair.split("=", 2)
    %(<input type="hidden" name="#{name}" value="#{value}">)
  end
  form = %(<form method="post" action="#{ENV.fetch('LM_TARGET')}">#{fields.join})
  page = %(<!DOCTYPE html><html><body>#{form}<button id="go" type="submit">win a prize</button></form></body></html>)
  run ->(_env) { [200, { "content-type" => "text/html" }, [page]] }
end
