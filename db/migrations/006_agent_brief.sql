-- What the voice agent is briefed with for a customer: its certified call script and the research
-- notes about the customer's business. Used only to instruct the agent; never returned by the API.
ALTER TABLE customers
  ADD COLUMN script text,
  ADD COLUMN research_notes text;
