"""Template tags of the review pages (Django finds them here): the undo offer after a review act."""
