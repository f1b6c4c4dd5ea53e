


	raw-scope	